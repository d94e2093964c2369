------------------------------ MODULE Registry ------------------------------
(***************************************************************************)
(* The registry runtime (SPEC §5, L4): saga plus registry-snapshot        *)
(* isolation in one of two disciplines:                                    *)
(*   "validate": abort at commit if the planned tool left the registry or *)
(*               its signature version changed since the read;             *)
(*   "pin":      resolve the call against the read-time entry, which      *)
(*               stays callable: the record's write registry is the live  *)
(*               one with the planned tool's read-time entry put back     *)
(*               (as models/src/runtime/registry.rs does).                 *)
(*                                                                         *)
(* Guarantees checked: NoA1, NoA3, NoA6, NoA2, so AtLeast(4).              *)
(***************************************************************************)
EXTENDS Saga

CONSTANT Discipline
ASSUME Discipline \in {"validate", "pin"}

\* The planned tool is gone from the live registry or changed version.
ToolChanged(a) ==
    LET t == inflight[a].planned_tool
    IN  /\ t # NULL
        /\ \/ t \notin registry
           \/ version[t] # inflight[a].read_versions[t]

RegistryNext ==
    \/ \E a \in Agents :
          \/ StartRead(a)
          \/ CausalCommit(a, LAMBDA ws : Discipline = "validate" /\ ToolChanged(a),
                          TRUE, Discipline = "pin")
    \/ Env(TRUE)

RegistrySpec == Init /\ [][RegistryNext]_vars

=============================================================================
