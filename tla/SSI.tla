-------------------------------- MODULE SSI --------------------------------
(***************************************************************************)
(* Serializable snapshot isolation (SPEC §5, L1): as SI, but every commit, *)
(* read-only ones included, is validated: the op aborts when a cell it    *)
(* read has a live committed version newer than its read time.  An        *)
(* aborted op is logged (aborted = TRUE) and may retry: its agent is free *)
(* to StartRead again.                                                     *)
(*                                                                         *)
(* Guarantees checked: NoA1 (so AtLeast(1)).  A3 (with provenance and     *)
(* retraction), A6 and A2 stay admitted.                                   *)
(***************************************************************************)
EXTENDS Levels

SSINext ==
    \/ \E a \in Agents :
          \/ StartRead(a)
          \/ CommitWith(a, LAMBDA ws : TRUE, LAMBDA ws : StaleRead(a), FALSE, FALSE)
    \/ Env(FALSE)

SSISpec == Init /\ [][SSINext]_vars

=============================================================================
