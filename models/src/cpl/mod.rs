//! Causal Past Logic (CPL.md): guards over what an agent can causally know.
