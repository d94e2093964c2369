------------------------------- MODULE Memory -------------------------------
(***************************************************************************)
(* The single-store operational model of SPEC §1 ("Memory").              *)
(*                                                                         *)
(* An operation is a long read -> generate -> write: StartRead fills the   *)
(* agent's in-flight record, CompleteWrite appends it to the log.  The     *)
(* length of the log is the logical clock.                                 *)
(*                                                                         *)
(* With every extension constant FALSE (and MaxVersion = 0) this is       *)
(* exactly the paper-faithful transition system; TLC reproduces the        *)
(* reference figures (1 agent, 1 cell, MaxOps 2: 31,942 distinct states,   *)
(* 33,497 generated, depth 7).  The precise reading that fixes those       *)
(* numbers is written down in README.md beside this file.                  *)
(*                                                                         *)
(* The building blocks (Begin, Finish, the choice sets) are shared with    *)
(* the runtime modules, which guard them; Next below is the vanilla (L0)   *)
(* runtime.  A pass of TLC on a config proves the checked invariants for   *)
(* those bounds only; it says nothing about larger bounds.                 *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    Agents, Cells, Values, Tools,   \* finite sets of names
    NULL,                           \* the empty value / no tool (a model value)
    MaxOps,                         \* bound on len(log)
    ExternalCells,                  \* the cells SkewExternalOnly frees (else unused)
    AllowSkew,                      \* reads may deviate from memory (SPEC §1, the paper's)
    SkewExternalOnly,               \* ext. 5: ... on ExternalCells only (needs AllowSkew)
    Canonical,                      \* ext. 1: write values NULL outside the write set
    Provenance,                     \* ext. 2: preds recorded at StartRead
    Retraction,                     \* ext. 3: Retract(i) of a committed record
    MaxVersion                      \* ext. 4: signature versions 0..MaxVersion (0 = off)

ASSUME NULL \notin Values
ASSUME ExternalCells \subseteq Cells
ASSUME MaxOps \in Nat /\ MaxVersion \in Nat
ASSUME \A b \in {AllowSkew, SkewExternalOnly, Canonical, Provenance, Retraction} : b \in BOOLEAN
ASSUME SkewExternalOnly => AllowSkew

VARIABLES
    log,        \* sequence of records; Len(log) is the clock
    inflight,   \* inflight[a]: a's pending record, or EmptyRec
    registry,   \* subset of Tools
    version,    \* version[t]: signature version of t (constant 0 unless MaxVersion > 0)
    memory      \* memory[c] \in Val

vars == <<log, inflight, registry, version, memory>>

Val == Values \cup {NULL}

(* The empty in-flight record: pending FALSE, sets empty, value maps NULL,  *)
(* times 0, planned tool NULL.                                             *)
EmptyRec == [pending       |-> FALSE,
             read_set      |-> {},
             read_values   |-> [c \in Cells |-> NULL],
             read_registry |-> {},
             read_versions |-> [t \in Tools |-> 0],
             planned_tool  |-> NULL,
             read_time     |-> 0,
             preds         |-> {}]

TypeOK ==
    /\ log \in Seq([agent: Agents, read_set: SUBSET Cells, read_values: [Cells -> Val],
                    read_registry: SUBSET Tools, read_versions: [Tools -> 0..MaxVersion],
                    planned_tool: Tools \cup {NULL}, read_time: Nat,
                    write_set: SUBSET Cells, write_values: [Cells -> Val],
                    write_registry: SUBSET Tools, write_versions: [Tools -> 0..MaxVersion],
                    write_time: Nat, io: Seq(Cells \X Val), co: Seq(Cells \X Val),
                    aborted: BOOLEAN, preds: SUBSET Nat])
    /\ Len(log) <= MaxOps
    /\ inflight \in [Agents -> [pending: BOOLEAN, read_set: SUBSET Cells,
                                read_values: [Cells -> Val], read_registry: SUBSET Tools,
                                read_versions: [Tools -> 0..MaxVersion],
                                planned_tool: Tools \cup {NULL}, read_time: Nat,
                                preds: SUBSET Nat]]
    /\ registry \subseteq Tools
    /\ version \in [Tools -> 0..MaxVersion]
    /\ memory \in [Cells -> Val]

Init ==
    /\ log = <<>>
    /\ inflight = [a \in Agents |-> EmptyRec]
    /\ registry = Tools
    /\ version = [t \in Tools |-> 0]
    /\ memory = [c \in Cells |-> NULL]

-----------------------------------------------------------------------------
(* Choice sets.                                                            *)

\* Read values: a total map equal to memory unless AllowSkew (the paper's
\* (~AllowSkew) => (rv = memory): with skew every cell's read is free), or, with
\* ext. 5 (SkewExternalOnly), free on ExternalCells and equal to memory elsewhere.
Skewed(c) == AllowSkew /\ (~SkewExternalOnly \/ c \in ExternalCells)

ReadChoices ==
    {rv \in [Cells -> Val] : \A c \in Cells : Skewed(c) \/ rv[c] = memory[c]}

\* Write values: free outside the write set (paper), or NULL there (canonical).
WriteChoices(ws) ==
    IF Canonical THEN {wv \in [Cells -> Val] : \A c \in Cells \ ws : wv[c] = NULL}
                 ELSE [Cells -> Val]

\* Every ordering of ws, as a sequence of (cell, value) pairs.
Orders(ws, wv) ==
    LET n == Cardinality(ws)
    IN  {[k \in 1..n |-> <<f[k], wv[f[k]]>>] :
            f \in {g \in [1..n -> ws] : \A i, j \in 1..n : g[i] = g[j] => i = j}}

-----------------------------------------------------------------------------
(* Provenance (ext. 2): the latest live writer of c at or before time t,   *)
(* ties broken by log order; 0 if none.                                    *)

Writers(L, c, t) ==
    {k \in 1..Len(L) : ~L[k].aborted /\ c \in L[k].write_set /\ L[k].write_time <= t}

LatestWriter(L, c, t) ==
    LET W == Writers(L, c, t)
    IN  IF W = {} THEN 0
        ELSE CHOOSE k \in W : \A k2 \in W :
                \/ L[k2].write_time < L[k].write_time
                \/ L[k2].write_time = L[k].write_time /\ k2 <= k

\* Producers of the values read, plus (transitively) their own preds.
PredsAt(rs) ==
    LET direct == {LatestWriter(log, c, Len(log)) : c \in rs} \ {0}
    IN  direct \cup UNION {log[k].preds : k \in direct}

-----------------------------------------------------------------------------
(* Building blocks shared with the runtime modules.                        *)

CanStart(a)  == ~inflight[a].pending /\ Len(log) < MaxOps
CanFinish(a) == inflight[a].pending /\ Len(log) < MaxOps

\* a's in-flight record after reading rs (values rv) and planning pt.
Begin(a, rs, pt, rv) ==
    inflight' = [inflight EXCEPT ![a] =
        [pending       |-> TRUE,
         read_set      |-> rs,
         read_values   |-> rv,
         read_registry |-> registry,
         read_versions |-> version,
         planned_tool  |-> pt,
         read_time     |-> Len(log),
         preds         |-> IF Provenance THEN PredsAt(rs) ELSE {}]]

\* The record a's pending op appends.
Record(a, ws, wv, io, co, ab, wreg, wver) ==
    LET r == inflight[a]
    IN  [agent          |-> a,
         read_set       |-> r.read_set,
         read_values    |-> r.read_values,
         read_registry  |-> r.read_registry,
         read_versions  |-> r.read_versions,
         planned_tool   |-> r.planned_tool,
         read_time      |-> r.read_time,
         write_set      |-> ws,
         write_values   |-> wv,
         write_registry |-> wreg,
         write_versions |-> wver,
         write_time     |-> Len(log) + 1,
         io             |-> io,
         co             |-> co,
         aborted        |-> ab,
         preds          |-> r.preds]

\* Append a's record; apply its writes unless aborted; reset inflight[a].
Finish(a, ws, wv, io, co, ab, wreg, wver) ==
    /\ log' = Append(log, Record(a, ws, wv, io, co, ab, wreg, wver))
    /\ memory' = IF ab THEN memory
                 ELSE [c \in Cells |-> IF c \in ws THEN wv[c] ELSE memory[c]]
    /\ inflight' = [inflight EXCEPT ![a] = EmptyRec]

-----------------------------------------------------------------------------
(* Store queries the runtimes validate with.                              *)

\* A cell a read has a live committed version newer than a's read time.  A
\* record that is not aborted was committed (an abort at commit is final), and
\* a version whose record was retracted since no longer conflicts, as in
\* models/src/runtime/validate.rs (A1 counts only live writers, so nothing is lost).
StaleRead(a) ==
    \E c \in inflight[a].read_set : \E k \in 1..Len(log) :
        /\ ~log[k].aborted
        /\ c \in log[k].write_set
        /\ log[k].write_time > inflight[a].read_time

\* One of a's preds has been aborted or retracted.
DeadPred(a) == \E p \in inflight[a].preds : log[p].aborted

\* The pin discipline resolves the call against the read-time snapshot, which
\* stays callable: the record's write registry is a's read registry (as
\* models/src/runtime/registry.rs records it).
PinnedRegistry(a) == inflight[a].read_registry
PinnedVersions(a) == inflight[a].read_versions

-----------------------------------------------------------------------------
(* Generic actions; a runtime instantiates them.                          *)

\* StartRead, admitted by the runtime for read set rs (a refused begin is a
\* drop: no transition, no tokens spent).
StartWith(a, Admit(_)) ==
    /\ CanStart(a)
    /\ \E rs \in SUBSET Cells, pt \in registry \cup {NULL}, rv \in ReadChoices :
          /\ Admit(rs)
          /\ Begin(a, rs, pt, rv)
    /\ UNCHANGED <<log, registry, version, memory>>

\* CompleteWrite: the agent picks ws (if Allow(ws)), wv and the issue order io;
\* the world picks the completion order cmp; the runtime externalizes
\* (Sequenced: co = io, else co = cmp), decides Abort(ws), and resolves the
\* planned tool against the live registry or (Pin) against the live registry
\* with the planned tool's read-time entry put back (it stays callable).
CommitWith(a, Allow(_), Abort(_), Sequenced, Pin) ==
    /\ CanFinish(a)
    /\ \E ws \in SUBSET Cells : Allow(ws) /\ \E wv \in WriteChoices(ws) :
       \E io \in Orders(ws, wv), cmp \in Orders(ws, wv) :
          Finish(a, ws, wv, io, IF Sequenced THEN io ELSE cmp, Abort(ws),
                 IF Pin THEN PinnedRegistry(a) ELSE registry,
                 IF Pin THEN PinnedVersions(a) ELSE version)
    /\ UNCHANGED <<registry, version>>

\* Ext. 3: a supervisor withdraws live record i.  With Cascade every live
\* record whose preds contain i is aborted too (preds are transitively closed,
\* so one pass reaches every dependant).  Retraction only flags records
\* (SPEC §1): memory keeps the retracted writes under every runtime, as the
\* Rust runtimes do; provenance and validation skip aborted writers instead.
RetractWith(i, Cascade) ==
    LET doomed(k) == k = i \/ (Cascade /\ ~log[k].aborted /\ i \in log[k].preds)
    IN  /\ Retraction
        /\ ~log[i].aborted
        /\ log' = [k \in 1..Len(log) |->
                     IF doomed(k) THEN [log[k] EXCEPT !.aborted = TRUE] ELSE log[k]]
        /\ UNCHANGED <<inflight, registry, version, memory>>

-----------------------------------------------------------------------------
(* The vanilla runtime (L0): paper-faithful when the extensions are off.   *)

StartRead(a) == StartWith(a, LAMBDA rs : TRUE)

CompleteWrite(a) == CommitWith(a, LAMBDA ws : TRUE, LAMBDA ws : FALSE, FALSE, FALSE)

\* A removed tool never returns, and its signature version goes with it: it is
\* reset to 0 so that states differing only in a removed tool's version are one
\* state (the Rust registry drops the whole entry).  With MaxVersion = 0 this is
\* the paper's RemoveTool.
RemoveTool(t) ==
    /\ t \in registry
    /\ registry' = registry \ {t}
    /\ version' = [version EXCEPT ![t] = 0]
    /\ UNCHANGED <<log, inflight, memory>>

\* Ext. 4: bump t's signature version (bounded by MaxVersion).
ChangeSignature(t) ==
    /\ t \in registry
    /\ version[t] < MaxVersion
    /\ version' = [version EXCEPT ![t] = @ + 1]
    /\ UNCHANGED <<log, inflight, registry, memory>>

Retract(i) == RetractWith(i, FALSE)

\* The environment: registry changes and supervisors' retractions.
Env(Cascade) ==
    \/ \E t \in Tools : RemoveTool(t) \/ ChangeSignature(t)
    \/ \E i \in 1..Len(log) : RetractWith(i, Cascade)

Next ==
    \/ \E a \in Agents : StartRead(a) \/ CompleteWrite(a)
    \/ Env(FALSE)

Spec == Init /\ [][Next]_vars

=============================================================================
