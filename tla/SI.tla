--------------------------------- MODULE SI ---------------------------------
(***************************************************************************)
(* The paper's default snapshot isolation (SPEC §5): reads come from the  *)
(* multi-version store at read time (the log is the version history); at  *)
(* commit, if the write set is non-empty, the op aborts when a read cell  *)
(* has a live committed version newer than its read time.  Read-only      *)
(* commits skip validation, which is exactly how SI admits A1 (the        *)
(* paper's 3 % triage gap).                                                *)
(*                                                                         *)
(* AllWriters expresses the all-writers hypothesis: every op writes (at   *)
(* least) every cell it read, rs \subseteq ws; under it SI's NoA1 holds.  *)
(*                                                                         *)
(* Guarantees checked: VersionsInCommitOrder always; NoA1 only with       *)
(* AllWriters (without it the config expects the A1 witness).              *)
(***************************************************************************)
EXTENDS Levels

CONSTANT AllWriters
ASSUME AllWriters \in BOOLEAN

SIAllow(a, ws) == AllWriters => inflight[a].read_set \subseteq ws

SINext ==
    \/ \E a \in Agents :
          \/ StartRead(a)
          \/ CommitWith(a, LAMBDA ws : SIAllow(a, ws),
                           LAMBDA ws : ws # {} /\ StaleRead(a), FALSE, FALSE)
    \/ Env(FALSE)

SISpec == Init /\ [][SINext]_vars

\* The store's versions are in commit order: write times strictly increase.
VersionsInCommitOrder ==
    \A i, j \in 1..Len(log) : i < j => log[i].write_time < log[j].write_time

=============================================================================
