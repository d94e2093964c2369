------------------------------ MODULE Anomalies ------------------------------
(***************************************************************************)
(* The anomaly predicates of SPEC §3 over a log L, transcribed literally   *)
(* (one quantifier per clause), and the invariants TLC checks (NoA1 ...).  *)
(*                                                                         *)
(* Aborted records are read as in models/src/detect/mod.rs: A1, A2 and A6  *)
(* are exhibited only by records that are not aborted, and A1's           *)
(* intervening writer must not be aborted either (its writes were never    *)
(* visible).  A3 is about aborted records.  The residue form of A3 and     *)
(* L1_struct count only non-aborted records as producers (the reader       *)
(* itself may be aborted).  Paper-faithful logs abort nothing, so there    *)
(* the reading changes nothing.                                            *)
(*                                                                         *)
(* An invariant NoAx that TLC reports violated comes with a shortest       *)
(* trace (BFS); one that holds holds for the config's bounds only.         *)
(***************************************************************************)
EXTENDS Memory

Idx(L) == 1..Len(L)
Live(L, i) == ~L[i].aborted

(* A1 stale-generation: i and j of different agents, c read by i and      *)
(* written by j strictly inside i's window, with a different value.        *)
A1(L) ==
    \E i, j \in Idx(L) :
        /\ i # j
        /\ L[i].agent # L[j].agent
        /\ Live(L, i) /\ Live(L, j)
        /\ \E c \in L[i].read_set \cap L[j].write_set :
              /\ L[i].read_time < L[j].write_time
              /\ L[j].write_time < L[i].write_time
              /\ L[i].read_values[c] # L[j].write_values[c]

(* A2 phantom-tool: the planned tool was in the read-time registry and is  *)
(* gone from the write-time registry, or (ext. 4) its version changed.     *)
A2(L) ==
    \E i \in Idx(L) :
        LET t == L[i].planned_tool
        IN  /\ Live(L, i)
            /\ t # NULL
            /\ t \in L[i].read_registry
            /\ \/ t \notin L[i].write_registry
               \/ L[i].read_versions[t] # L[i].write_versions[t]

(* A3 causal-cascade (preds form): a live record with an aborted pred.    *)
A3(L) ==
    \E j \in Idx(L) :
        /\ Live(L, j)
        /\ \E p \in L[j].preds : p \in Idx(L) /\ L[p].aborted

(* A3 residue form: j read a non-NULL value of c that no other live k     *)
(* wrote at or before j's read time.  Over-approximates A3.                *)
A3Residue(L) ==
    \E j \in Idx(L) : \E c \in L[j].read_set :
        LET v == L[j].read_values[c]
        IN  /\ v # NULL
            /\ ~\E k \in Idx(L) :
                   /\ k # j
                   /\ Live(L, k)
                   /\ c \in L[k].write_set
                   /\ L[k].write_values[c] = v
                   /\ L[k].write_time <= L[j].read_time

\* co is a permutation of io: a bijection of positions matching elements.
IsPermutation(io, co) ==
    /\ Len(io) = Len(co)
    /\ \E f \in [1..Len(io) -> 1..Len(co)] :
          /\ \A x, y \in 1..Len(io) : f[x] = f[y] => x = y
          /\ \A x \in 1..Len(io) : co[f[x]] = io[x]

(* A6 tool-effect reordering: |io| >= 2, co # io, co a permutation of io. *)
A6(L) ==
    \E i \in Idx(L) :
        /\ Live(L, i)
        /\ Len(L[i].io) >= 2
        /\ L[i].co # L[i].io
        /\ IsPermutation(L[i].io, L[i].co)

(* L1_struct: every read value equals the latest live write to that cell  *)
(* at or before the read time (NULL if none); ties by log order.          *)
Expected(L, j, c) ==
    LET W == {k \in Idx(L) \ {j} : Live(L, k) /\ c \in L[k].write_set
                                    /\ L[k].write_time <= L[j].read_time}
        latest == CHOOSE k \in W : \A k2 \in W :
                     \/ L[k2].write_time < L[k].write_time
                     \/ L[k2].write_time = L[k].write_time /\ k2 <= k
    IN  IF W = {} THEN NULL ELSE L[latest].write_values[c]

L1Struct(L) ==
    \A j \in Idx(L) : \A c \in L[j].read_set : L[j].read_values[c] = Expected(L, j, c)

-----------------------------------------------------------------------------
(* Invariants.  A config that expects a witness checks the negation and   *)
(* expects TLC to report it violated.                                      *)

NoA1 == ~A1(log)
NoA2 == ~A2(log)
NoA3 == ~A3(log)
NoA3Residue == ~A3Residue(log)
NoA6 == ~A6(log)

\* SPEC §3: L1_struct does not imply ~A1; TLC refutes this invariant.
StructImpliesNoA1 == L1Struct(log) => ~A1(log)

=============================================================================
