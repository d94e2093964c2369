//! LangGraph channels: one per state key, `LastValue` (no reducer) or a reducer fold.
//!
//! A channel takes the writes one superstep delivers to its key, in task order, and returns the
//! key's new value. `LastValue` accepts at most one write per step and fails hard on two; a
//! reducer (`Annotated[T, op]`, LangGraph's `BinaryOperatorAggregate`) folds every write into
//! the old value in task order. Values are [`Value`]s; `None` is [`Value::NULL`]. A pass of the
//! tests shows the error text and the fold order; it does not show LangGraph raises the same.

use agentsim_models::names::Value;

/// LangGraph's error code for two writes to one `LastValue` key in one superstep.
pub const INVALID_CONCURRENT_GRAPH_UPDATE: &str = "INVALID_CONCURRENT_GRAPH_UPDATE";

/// A reducer: `new = fold(old, write)`. `old` is NULL for a key never written.
pub type Reducer = fn(Value, Value) -> Value;

/// The channel of one state key.
#[derive(Clone, Copy, Debug)]
pub enum Channel {
    /// No reducer: one write per step, the last step's write wins.
    LastValue,
    /// `Annotated[T, reducer]`: writes folded into the old value in task order.
    Reduce(Reducer),
}

/// Two tasks of one superstep wrote the same `LastValue` key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "InvalidUpdateError: At key '{key}': Can receive only one value per step. \
     Use an Annotated key to handle multiple values."
)]
pub struct InvalidUpdateError {
    /// The state key's name.
    pub key: String,
    /// The superstep (0-based) that failed.
    pub step: usize,
    /// The names of the tasks that wrote the key, in task order.
    pub writers: Vec<String>,
}

impl InvalidUpdateError {
    /// LangGraph's error code for this error.
    pub fn code(&self) -> &'static str {
        INVALID_CONCURRENT_GRAPH_UPDATE
    }
}

impl Channel {
    /// The key's value after one step's `writes` (task order) on top of `old`; `None` when a
    /// `LastValue` channel receives more than one write (the caller raises the error, naming
    /// the key). An empty `writes` leaves the value as it was.
    pub fn apply(&self, old: Value, writes: &[Value]) -> Option<Value> {
        match self {
            Channel::LastValue => match writes {
                [] => Some(old),
                [one] => Some(*one),
                _ => None,
            },
            Channel::Reduce(f) => Some(writes.iter().fold(old, |acc, &w| f(acc, w))),
        }
    }

    /// Whether this channel has a reducer.
    pub fn is_reducer(&self) -> bool {
        matches!(self, Channel::Reduce(_))
    }
}

/// A reducer keeping the last non-None write: deer-flow's fix for a state key erased by a
/// partial update (SPEC §7).
pub fn keep_last_non_null(old: Value, new: Value) -> Value {
    if new.is_null() {
        old
    } else {
        new
    }
}

/// A non-commutative reducer: appends a digit (`new`, 1..=15) to a base-16 list (`old`), like
/// `operator.add` on lists. Used to observe fold order. Saturates rather than overflow.
pub fn append_digit(old: Value, new: Value) -> Value {
    assert!(
        new.0 < 16,
        "append_digit takes a digit below 16, got {}",
        new.0
    );
    Value(old.0.saturating_mul(16).saturating_add(new.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_value_takes_one_write_per_step() {
        let c = Channel::LastValue;
        assert_eq!(c.apply(Value(1), &[]), Some(Value(1)));
        assert_eq!(c.apply(Value(1), &[Value(2)]), Some(Value(2)));
        // A returned None is a write: it erases the value (deer-flow 3123).
        assert_eq!(c.apply(Value(1), &[Value::NULL]), Some(Value::NULL));
        assert_eq!(c.apply(Value(1), &[Value(2), Value(3)]), None);
    }

    #[test]
    fn reducers_fold_in_the_given_order() {
        let keep = Channel::Reduce(keep_last_non_null);
        assert_eq!(keep.apply(Value(1), &[Value::NULL]), Some(Value(1)));
        assert_eq!(
            keep.apply(Value(1), &[Value(2), Value::NULL]),
            Some(Value(2))
        );
        let add = Channel::Reduce(append_digit);
        assert_eq!(
            add.apply(Value::NULL, &[Value(1), Value(2)]),
            Some(Value(0x12))
        );
        assert_eq!(
            add.apply(Value::NULL, &[Value(2), Value(1)]),
            Some(Value(0x21))
        );
    }

    #[test]
    fn the_error_text_is_langgraphs() {
        let e = InvalidUpdateError {
            key: "todos".into(),
            step: 1,
            writers: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            e.to_string(),
            "InvalidUpdateError: At key 'todos': Can receive only one value per step. \
             Use an Annotated key to handle multiple values."
        );
        assert_eq!(e.code(), "INVALID_CONCURRENT_GRAPH_UPDATE");
    }
}
