------------------------------- MODULE Causal -------------------------------
(***************************************************************************)
(* The causal runtime (SPEC §5, L2): SSI plus provenance.  A commit is    *)
(* accepted only if its reads are fresh and every pred is committed and   *)
(* alive; retracting an op aborts every op whose preds contain it         *)
(* (cascading abort).  Memory keeps retracted writes (SPEC §1 flags the   *)
(* record only); provenance skips aborted writers.  Cascade = FALSE is    *)
(* the `causal-no-cascade` twin, which admits A3.                          *)
(*                                                                         *)
(* Guarantees checked (Cascade): NoA1, NoA3 (no live op has a dead pred,  *)
(* also after a cascade), so AtLeast(2).  A6 and A2 stay admitted.         *)
(***************************************************************************)
EXTENDS Levels

CONSTANT Cascade
ASSUME Cascade \in BOOLEAN
ASSUME Provenance

CausalAbort(a) == StaleRead(a) \/ DeadPred(a)

\* Shared with Saga and Registry: the commit rule, with the sequencer and
\* the registry discipline as parameters.
CausalCommit(a, Extra(_), Sequenced, Pin) ==
    CommitWith(a, LAMBDA ws : TRUE, LAMBDA ws : CausalAbort(a) \/ Extra(ws), Sequenced, Pin)

CausalNext ==
    \/ \E a \in Agents : StartRead(a) \/ CausalCommit(a, LAMBDA ws : FALSE, FALSE, FALSE)
    \/ Env(Cascade)

CausalSpec == Init /\ [][CausalNext]_vars

=============================================================================
