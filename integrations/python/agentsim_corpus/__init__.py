"""The real-framework corpus: agent frameworks driven by their own code against a scripted
OpenAI-compatible server on 127.0.0.1 (``llm_server``), exporting what their instrumentation
emits, with the anomaly set each run must give."""
