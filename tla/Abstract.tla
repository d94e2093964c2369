------------------------------ MODULE Abstract ------------------------------
(***************************************************************************)
(* The history-free abstract model of SPEC §5.2, without retraction: the   *)
(* twin of `checker/src/models/abstract_model` for the runtimes vanilla,   *)
(* si, ssi and pessimistic (`Validate` = "none", "writers", "all",         *)
(* "lock"; the lock table is the read sets of the ops in flight).          *)
(*                                                                         *)
(* No log.  Each in-flight op keeps, in place of its read time, flags that *)
(* say what happened since its read: `newer` (a live commit wrote a cell   *)
(* it read: what validation reads), `stale` (... with another value: A1), *)
(* `changed` (its planned tool left the registry or changed signature:     *)
(* A2).  A violation is a sticky name in `violated`: nothing is ever       *)
(* aborted after its commit here, so an exhibited anomaly stays.  With     *)
(* `Bounded` an op counter stops appending at MaxOps and a full log        *)
(* forgets memory and the ops in flight (nothing can read or commit them   *)
(* again); without it there is no length component at all, and a pass of  *)
(* TLC covers histories of every length at these constants.                *)
(*                                                                         *)
(* Actions are the concrete model's under the Rust model's action          *)
(* abstraction: StartRead(a) per read set and planned tool (the values     *)
(* read are memory's); CompleteWrite(a) per write set, written values on   *)
(* it, and -- when A6 is watched and the set has two cells or more --      *)
(* whether the completion order differs from the issue order;              *)
(* RemoveTool(t); ChangeSignature(t) while version[t] < MaxVersion.  What  *)
(* the watched properties do not need is not kept (`Watch`): without "A1"  *)
(* no values and no memory, without "A2" no planned tools.  A pass says    *)
(* TLC and the Rust abstract checker agree at these bounds.                *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    Agents, Cells, Values, Tools,
    NULL,
    MaxOps,         \* the op bound when Bounded
    Bounded,        \* keep an op counter
    MaxVersion,     \* signature versions 0..MaxVersion (0: no ChangeSignature)
    Validate,       \* "none" (vanilla), "writers" (si), "all" (ssi)
    Watch           \* the watched anomalies, a subset of {"A1", "A2", "A6"}

ASSUME NULL \notin Values
ASSUME Validate \in {"none", "writers", "all", "lock"}
ASSUME Watch \subseteq {"A1", "A2", "A6"}
ASSUME Bounded \in BOOLEAN /\ MaxOps \in Nat /\ MaxVersion \in Nat

VARIABLES
    memory,     \* [Cells -> Val]; all NULL when values are not kept
    registry,   \* tools present
    version,    \* [Tools -> 0..MaxVersion]; a removed tool's is 0
    ops,        \* records appended (0 when not Bounded)
    pend,       \* pend[a]: a's op in flight, or Idle
    violated    \* the anomalies exhibited so far

vars == <<memory, registry, version, ops, pend, violated>>

Val == Values \cup {NULL}
Values_kept == "A1" \in Watch
ReadSets_kept == Values_kept \/ Validate # "none"
Newer_kept == Validate \in {"writers", "all"}
Tools_kept == "A2" \in Watch
Order_kept == "A6" \in Watch

Nulls == [c \in Cells |-> NULL]
Idle == [busy |-> FALSE, rs |-> {}, rv |-> Nulls, tool |-> NULL,
         changed |-> FALSE, newer |-> FALSE, stale |-> FALSE]

Room == ~Bounded \/ ops < MaxOps

Init ==
    /\ memory = Nulls
    /\ registry = Tools
    /\ version = [t \in Tools |-> 0]
    /\ ops = 0
    /\ pend = [a \in Agents |-> Idle]
    /\ violated = {}

(* The cells locked by the other agents' ops in flight: their read sets. *)
LockedByOthers(a) == UNION {pend[b].rs : b \in {b \in Agents \ {a} : pend[b].busy}}

StartRead(a) ==
    /\ Room
    /\ ~pend[a].busy
    /\ \E rs \in (IF ReadSets_kept THEN SUBSET Cells ELSE {{}}),
          pt \in (IF Tools_kept THEN registry \cup {NULL} ELSE {NULL}) :
         /\ (Validate = "lock" => rs \cap LockedByOthers(a) = {})
         /\ pend' = [pend EXCEPT ![a] =
                [busy |-> TRUE, rs |-> rs,
                 rv |-> [c \in Cells |-> IF c \in rs /\ Values_kept THEN memory[c] ELSE NULL],
                 tool |-> pt, changed |-> FALSE, newer |-> FALSE, stale |-> FALSE]]
    /\ UNCHANGED <<memory, registry, version, ops, violated>>

(* The other ops in flight after a live commit of wv on ws. *)
Witness(q, ws, wv) ==
    IF ~q.busy THEN q
    ELSE [q EXCEPT
            !.newer = @ \/ (Newer_kept /\ ws \cap q.rs # {}),
            !.stale = @ \/ (Values_kept /\ \E c \in ws \cap q.rs : wv[c] # q.rv[c])]

(* Whether the runtime aborts a's commit of write set ws. *)
Aborts(a, ws) ==
    CASE Validate = "all" -> pend[a].newer
      [] Validate = "writers" -> ws # {} /\ pend[a].newer
      [] Validate = "lock" -> (ws \cap LockedByOthers(a)) \ pend[a].rs # {}
      [] OTHER -> FALSE

Commit(a, ws, wv, re) ==
    LET p == pend[a]
        abort == Aborts(a, ws)
        found == (IF p.stale THEN {"A1"} ELSE {})
                 \cup (IF p.tool # NULL /\ p.changed THEN {"A2"} ELSE {})
                 \cup (IF re THEN {"A6"} ELSE {})
        ops2 == IF Bounded THEN ops + 1 ELSE 0
        full == Bounded /\ ops2 >= MaxOps
        mem2 == IF abort THEN memory
                ELSE [c \in Cells |-> IF c \in ws THEN wv[c] ELSE memory[c]]
        pend2 == [b \in Agents |-> IF b = a THEN Idle
                                   ELSE IF abort THEN pend[b] ELSE Witness(pend[b], ws, wv)]
    IN /\ violated' = violated \cup (IF abort THEN {} ELSE found \cap Watch)
       /\ ops' = ops2
       /\ memory' = IF full THEN Nulls ELSE mem2
       /\ pend' = IF full THEN [b \in Agents |-> Idle] ELSE pend2
       /\ UNCHANGED <<registry, version>>

CompleteWrite(a) ==
    /\ Room
    /\ pend[a].busy
    /\ \E ws \in SUBSET Cells :
         \E wv \in [Cells -> Val] :
           /\ \A c \in Cells : (c \notin ws \/ ~Values_kept) => wv[c] = NULL
           /\ \E re \in (IF Order_kept /\ Cardinality(ws) >= 2 THEN BOOLEAN ELSE {FALSE}) :
                Commit(a, ws, wv, re)

(* Tool t's entry changed: flag the ops in flight that plan it. *)
Flag(t) == [b \in Agents |-> IF pend[b].busy /\ pend[b].tool = t
                             THEN [pend[b] EXCEPT !.changed = TRUE] ELSE pend[b]]

RemoveTool(t) ==
    /\ t \in registry
    /\ registry' = registry \ {t}
    /\ version' = [version EXCEPT ![t] = 0]
    /\ pend' = Flag(t)
    /\ UNCHANGED <<memory, ops, violated>>

ChangeSignature(t) ==
    /\ t \in registry
    /\ version[t] < MaxVersion
    /\ version' = [version EXCEPT ![t] = @ + 1]
    /\ pend' = Flag(t)
    /\ UNCHANGED <<memory, registry, ops, violated>>

Next ==
    \/ \E a \in Agents : StartRead(a) \/ CompleteWrite(a)
    \/ \E t \in Tools : RemoveTool(t) \/ ChangeSignature(t)

Spec == Init /\ [][Next]_vars

NoA1 == "A1" \notin violated
NoA2 == "A2" \notin violated
NoA6 == "A6" \notin violated

=============================================================================
