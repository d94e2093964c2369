---------------------------- MODULE Pessimistic ----------------------------
(***************************************************************************)
(* The pessimistic runtime (SPEC §5, L1): at StartRead try-lock every     *)
(* read cell, non-blocking; on conflict the op is dropped before          *)
(* generation (no transition: nothing is spent, nothing is logged).  At   *)
(* commit the write cells outside the read set must be free too, or the   *)
(* op aborts.  Locks are released at commit or abort.                      *)
(*                                                                         *)
(* The locks are not a separate variable: a cell is locked by exactly the *)
(* agents whose pending op read it, so they are a function of inflight    *)
(* and add no states.  The commit-time locks of extra write cells are     *)
(* taken and released inside the one atomic CompleteWrite step.           *)
(*                                                                         *)
(* Guarantees checked: LockExclusive (at most one holder per cell) and    *)
(* NoA1.  A3, A6 and A2 stay admitted (configs expect their witnesses).   *)
(***************************************************************************)
EXTENDS Levels

Holders(c) == {a \in Agents : inflight[a].pending /\ c \in inflight[a].read_set}

\* c is free for a: nobody else holds it.
FreeFor(a, c) == Holders(c) \subseteq {a}

\* Begin succeeds iff every read cell is free (try-lock, no waiting).
Admit(a, rs) == \A c \in rs : FreeFor(a, c)

\* Commit aborts iff a write cell outside the read set is held by another.
LockConflict(a, ws) == \E c \in ws \ inflight[a].read_set : ~FreeFor(a, c)

PessimisticNext ==
    \/ \E a \in Agents :
          \/ StartWith(a, LAMBDA rs : Admit(a, rs))
          \/ CommitWith(a, LAMBDA ws : TRUE, LAMBDA ws : LockConflict(a, ws), FALSE, FALSE)
    \/ Env(FALSE)

PessimisticSpec == Init /\ [][PessimisticNext]_vars

\* At most one lock holder per cell.
LockExclusive == \A c \in Cells : Cardinality(Holders(c)) <= 1

=============================================================================
