-------------------------------- MODULE Saga --------------------------------
(***************************************************************************)
(* The saga runtime (SPEC §5, L3): causal plus a commit-order sequencer.   *)
(* The world completes an op's effects in any order; the sequencer makes  *)
(* effect k visible only after effects 1..k-1, so co = io.  An aborted     *)
(* op's completed effects are compensated in reverse issue order; in this *)
(* model an aborted op's writes never reach memory, so compensation       *)
(* leaves no trace in the state.                                           *)
(*                                                                         *)
(* Guarantees checked: Sequenced (co = io for every record), NoA1, NoA3,  *)
(* NoA6, so AtLeast(3).  A2 stays admitted.                                *)
(***************************************************************************)
EXTENDS Causal

ASSUME Cascade

SagaNext ==
    \/ \E a \in Agents : StartRead(a) \/ CausalCommit(a, LAMBDA ws : FALSE, TRUE, FALSE)
    \/ Env(TRUE)

SagaSpec == Init /\ [][SagaNext]_vars

\* The sequencer never externalizes effect k before effects 1..k-1.
Sequenced == \A i \in 1..Len(log) : log[i].co = log[i].io

=============================================================================
