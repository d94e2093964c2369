------------------------------- MODULE Levels -------------------------------
(***************************************************************************)
(* The named chain of SPEC §4: L0 = true, L1 = ~A1, L2 = L1 /\ ~A3,       *)
(* L3 = L2 /\ ~A6, L4 = L3 /\ ~A2, each a predicate on the current log,   *)
(* and Level(L), the highest Lk a log satisfies.                           *)
(*                                                                         *)
(* A runtime module states "runtime R is at level k" as the invariant     *)
(* AtLeast(k); TLC checks it at the config's bounds.  The chain is one of  *)
(* the lattice's 24 maximal chains; the other points are not named here.   *)
(***************************************************************************)
EXTENDS Anomalies

\* The anomalies a log exhibits: its lattice point.
Point(L) ==
    {x \in {"A1", "A2", "A3", "A6"} :
        \/ x = "A1" /\ A1(L)
        \/ x = "A2" /\ A2(L)
        \/ x = "A3" /\ A3(L)
        \/ x = "A6" /\ A6(L)}

\* Lk as the set it excludes, step by step along the named chain.
Excluded(k) ==
    CASE k = 0 -> {}
      [] k = 1 -> {"A1"}
      [] k = 2 -> {"A1", "A3"}
      [] k = 3 -> {"A1", "A3", "A6"}
      [] k = 4 -> {"A1", "A3", "A6", "A2"}

Sat(L, k) == Point(L) \cap Excluded(k) = {}

L0(L) == Sat(L, 0)
L1(L) == Sat(L, 1)
L2(L) == Sat(L, 2)
L3(L) == Sat(L, 3)
L4(L) == Sat(L, 4)

\* The highest level on the chain the log satisfies (the chain is nested,
\* so this is the largest k with Sat).
Level(L) == CHOOSE k \in 0..4 : Sat(L, k) /\ (k = 4 \/ ~Sat(L, k + 1))

\* Invariant: the current log is at level k or above.
AtLeast(k) == Level(log) >= k

\* Sanity of the chain itself: each step excludes exactly one more anomaly
\* and the levels are nested (a log at Lk+1 is at Lk).
ChainOK ==
    /\ \A k \in 0..3 : Excluded(k) \subseteq Excluded(k + 1)
    /\ \A k \in 0..3 : Cardinality(Excluded(k + 1) \ Excluded(k)) = 1
    /\ \A k \in 0..3 : Sat(log, k + 1) => Sat(log, k)

=============================================================================
