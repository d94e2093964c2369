//! The commit-order sequencer under every completion order of 4 effects (4! = 24): it must
//! externalize in issue order, release each effect as soon as its predecessors have completed
//! (never earlier, never later), and make `saga` records A6-free, while `vanilla` shows A6
//! for exactly the 23 non-identity orders.

use agentsim_models::detect::spec;
use agentsim_models::runtime::{
    BeginRequest, CommitRequest, Externalization, Guarded, Options, RuntimeKind, Sequencer,
};
use agentsim_models::{Agent, Cell, History, Registry, Value};

/// Every permutation of `0..n`, in lexicographic order.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for first in 0..n {
        for rest in permutations(n - 1) {
            let mut p = vec![first];
            p.extend(rest.into_iter().map(|x| if x >= first { x + 1 } else { x }));
            out.push(p);
        }
    }
    out
}

#[test]
fn there_are_24_orders() {
    let ps = permutations(4);
    assert_eq!(ps.len(), 24);
    let mut sorted = ps.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 24);
}

#[test]
fn sequencer_releases_in_issue_order_as_early_as_possible() {
    for completion in permutations(4) {
        let mut s = Sequencer::new(4);
        let mut done = [false; 4];
        for (step, &k) in completion.iter().enumerate() {
            done[k] = true;
            let released = s.complete(k);
            // The released prefix is exactly the longest completed prefix.
            let prefix = done.iter().take_while(|&&d| d).count();
            assert_eq!(
                s.released(),
                (0..prefix).collect::<Vec<_>>(),
                "{completion:?}"
            );
            for &e in &released {
                assert!(done[..=e].iter().all(|&d| d), "{completion:?} step {step}");
            }
        }
        assert!(s.is_done());
        assert_eq!(Sequencer::run(&completion), [0, 1, 2, 3]);
    }
}

#[test]
fn visible_times_are_the_running_maximum() {
    for completion in permutations(4) {
        // Effect `completion[t]` completes at time t + 1.
        let mut at = [0u64; 4];
        for (t, &k) in completion.iter().enumerate() {
            at[k] = t as u64 + 1;
        }
        let vis = Externalization::Sequenced.visible_at(&at);
        for k in 0..4 {
            assert_eq!(
                vis[k],
                *at[..=k].iter().max().unwrap_or(&0),
                "{completion:?}"
            );
        }
        assert!(vis.windows(2).all(|w| w[0] <= w[1]));
    }
}

fn a6_count(kind: RuntimeKind, completion: &[usize]) -> usize {
    let mut rt = Guarded::new(kind, Registry::all(0), Options::default());
    rt.begin(&BeginRequest::new(Agent(0), vec![], None));
    let w: Vec<_> = (0..4).map(|c| (Cell(c), Value(c + 1))).collect();
    rt.commit(&CommitRequest::new(Agent(0), &w).completing(completion.to_vec()));
    spec::a6(&History::from_records(rt.log().to_vec()).records).len()
}

#[test]
fn saga_never_reorders_vanilla_reorders_23_of_24() {
    let ps = permutations(4);
    let saga: usize = ps.iter().map(|p| a6_count(RuntimeKind::Saga, p)).sum();
    let vanilla: usize = ps.iter().map(|p| a6_count(RuntimeKind::Vanilla, p)).sum();
    assert_eq!(saga, 0);
    assert_eq!(vanilla, 23);
}
