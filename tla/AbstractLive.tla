---------------------------- MODULE AbstractLive ----------------------------
(***************************************************************************)
(* Liveness of the history-free abstract model (Abstract.tla), the twin of *)
(* `agentsim check --abstract --property starvation` (or livelock) under   *)
(* weak or strong fairness (checker/src/engine/fair.rs), and of its        *)
(* liveness table.  Use it without a length bound: with                    *)
(* `Bounded` every run ends at MaxOps and says nothing about progress.     *)
(*                                                                         *)
(* `lastLive` is the agent whose live (not aborted) commit was the step    *)
(* into this state, NULL after any other step: an abort and a live commit  *)
(* can lead to the same abstract state (si: an empty write set commits     *)
(* where a non-empty one aborts), so the step's outcome is kept, as the    *)
(* Rust checker labels each transition.  Fairness is per agent over all of *)
(* its actions; the environment (registry changes) is not fair.            *)
(*                                                                         *)
(*   StarvationFree: an agent with an op in flight infinitely often        *)
(*     commits live infinitely often (it is not aborted and retried, or    *)
(*     left in flight, forever).                                           *)
(*   LivelockFree: if agents step infinitely often, some agent commits     *)
(*     live infinitely often.                                              *)
(***************************************************************************)
EXTENDS Abstract

VARIABLE lastLive

lvars == <<vars, lastLive>>

CompleteWriteL(a) ==
    /\ Room
    /\ pend[a].busy
    /\ \E ws \in SUBSET Cells :
         \E wv \in [Cells -> Val] :
           /\ \A c \in Cells : (c \notin ws \/ ~Values_kept) => wv[c] = NULL
           /\ \E re \in (IF Order_kept /\ Cardinality(ws) >= 2 THEN BOOLEAN ELSE {FALSE}) :
                /\ Commit(a, ws, wv, re)
                /\ lastLive' = IF Aborts(a, ws) THEN NULL ELSE a

Agent(a) == (StartRead(a) /\ lastLive' = NULL) \/ CompleteWriteL(a)

Env == \E t \in Tools : (RemoveTool(t) \/ ChangeSignature(t)) /\ lastLive' = NULL

LInit == Init /\ lastLive = NULL

LNext == (\E a \in Agents : Agent(a)) \/ Env

SpecNone == LInit /\ [][LNext]_lvars
SpecWF == SpecNone /\ \A a \in Agents : WF_lvars(Agent(a))
SpecSF == SpecNone /\ \A a \in Agents : SF_lvars(Agent(a))

StarvationFree == \A a \in Agents : []<>pend[a].busy => []<>(lastLive = a)

LivelockFree == []<><<\E a \in Agents : Agent(a)>>_lvars => []<>(lastLive # NULL)

=============================================================================
