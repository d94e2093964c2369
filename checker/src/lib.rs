//! `agentsim-checker`: exhaustive exploration of the agentsim model (SPEC §1) on stateright.
