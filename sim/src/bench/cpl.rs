//! The CPL monitor benchmark (`agentsim bench cpl`, also `agentsim cpl bench`): per-event monitor time and bytes per message on CPL.md's workloads.
//!
//! Method (after the paper's: medians of batch means after warm-up): for each workload, an
//! informed *sender* (lifeline 0, which has received from every other lifeline) and a stale
//! *receiver* (the last lifeline, which has seen only its own two events). `local` times a
//! batch of local events at the sender; `send` a batch of sends, each including the binary
//! encoding into a reused buffer; `recv` a batch of receives at fresh copies of the stale
//! receiver, each including the binary decoding, so every receive copies the rows of all
//! other lifelines (the worst case). Event effects (one variable set to a seeded random value
//! of its domain) are drawn before timing. Wall-clock figures on a shared machine are noisy;
//! they show orders of magnitude, not a stable ranking.

use agentsim_cpl::{
    compile, parse_guards, wire, workload, Lit, Message, Monitor, Program, Symbols, Value,
};
use anyhow::Result;
use rand::{RngExt as _, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

/// How to time the monitor.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Timed batches per figure (the median of their means is reported).
    pub batches: u32,
    /// Events per batch.
    pub batch: u32,
    /// Untimed events before the batches.
    pub warmup: u32,
    /// Seed of the event effects.
    pub seed: u64,
}

/// One workload's figures.
#[derive(Debug, serde::Serialize)]
pub struct Figures {
    pub workload: String,
    pub lifelines: usize,
    pub subformulas: usize,
    pub variables: usize,
    pub local_ns: f64,
    pub send_ns: f64,
    pub recv_ns: f64,
    pub binary_bytes: usize,
    pub json_bytes: usize,
}

/// A compiled workload and its pre-drawn event effects.
struct Setup {
    prog: Program,
    syms: Symbols,
    /// `sets[l]`: effects for lifeline l's events, used round-robin.
    sets: Vec<Vec<Vec<(usize, Value)>>>,
}

/// Times every reference workload of CPL.md, reporting each on stderr as it starts.
pub fn run(cfg: &Config) -> Result<Vec<Figures>> {
    let mut all = Vec::new();
    for w in workload::all() {
        eprintln!("cpl bench: {}", w.name);
        all.push(measure(&w, cfg)?);
    }
    Ok(all)
}

fn setup(w: &workload::Workload, seed: u64) -> Result<Setup> {
    let guards = parse_guards(&w.guards)?;
    let mut syms = Symbols::new();
    let mut vars: Vec<String> = w.writes.iter().flatten().map(|(v, _)| v.clone()).collect();
    vars.sort();
    vars.dedup();
    let prog = compile(&guards, &w.lifelines, &vars, &mut syms)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sets = Vec::new();
    for writes in &w.writes {
        let mut mine = Vec::new();
        for _ in 0..256 {
            if writes.is_empty() {
                mine.push(Vec::new());
                continue;
            }
            let (var, domain) = &writes[rng.random_range(0..writes.len())];
            let value = match &domain[rng.random_range(0..domain.len())] {
                Lit::Bool(b) => Value::Bool(*b),
                Lit::Num(x) => Value::Num(*x),
                Lit::Str(s) => Value::Str(syms.intern(s)),
            };
            let v = prog
                .vars
                .iter()
                .position(|n| n == var)
                .expect("compiled variable");
            mine.push(vec![(v, value)]);
        }
        sets.push(mine);
    }
    Ok(Setup { prog, syms, sets })
}

/// The informed sender (lifeline 0) and the stale receiver (the last lifeline).
fn actors(s: &Setup) -> (Monitor, Monitor) {
    let (p, syms) = (&s.prog, &s.syms);
    let l = p.lifelines.len();
    let mut sender = Monitor::new(p, 0);
    let mut msg = Message::new(p);
    let mut receiver = None;
    for b in 1..l {
        let mut m = Monitor::new(p, b);
        m.local(p, syms, &s.sets[b][0]);
        m.send(p, syms, &s.sets[b][1], &mut msg);
        sender.recv(p, syms, &msg, &s.sets[0][b]);
        receiver = Some(m);
    }
    (sender, receiver.expect("at least two lifelines"))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Times `batches` batches of `n` calls of `f(state, i)` after `warmup` calls, each batch
/// after an untimed `prepare(state)`; ns per call.
fn time<S>(
    args: &Config,
    state: &mut S,
    prepare: impl Fn(&mut S),
    mut f: impl FnMut(&mut S, usize),
) -> f64 {
    let n = args.batch as usize;
    prepare(state);
    for i in 0..args.warmup as usize {
        f(state, i % n);
    }
    let mut means = Vec::new();
    for _ in 0..args.batches {
        prepare(state);
        let start = Instant::now();
        for i in 0..n {
            f(state, i);
        }
        means.push(start.elapsed().as_nanos() as f64 / n as f64);
    }
    median(means)
}

fn measure(w: &workload::Workload, args: &Config) -> Result<Figures> {
    let s = setup(w, args.seed)?;
    let (sender, receiver) = actors(&s);
    let n = args.batch as usize;
    let (p, sets0) = (&s.prog, &s.sets[0]);
    let mut local = sender.clone();
    let local_ns = time(
        args,
        &mut local,
        |_| {},
        |m, i| {
            m.local(p, &s.syms, &sets0[i % sets0.len()]);
        },
    );
    black_box(local.row());
    let mut sending = (
        sender.clone(),
        Message::new(p),
        vec![Vec::with_capacity(1024); n],
    );
    let send_ns = time(
        args,
        &mut sending,
        |st| st.0.clone_from(&sender),
        |st, i| {
            st.0.send(p, &s.syms, &sets0[i % sets0.len()], &mut st.1);
            wire::encode(&st.1, p, &s.syms, &mut st.2[i]);
        },
    );
    let (_, msg, bufs) = sending;
    let json_bytes = wire::to_json(&msg, p, &s.syms).len();
    let binary_bytes = bufs[n - 1].len();
    let last = p.lifelines.len() - 1;
    let recv_sets = &s.sets[last];
    let mut receiving = (vec![receiver.clone(); n], Message::new(p), s.syms.clone());
    let prepare = |st: &mut (Vec<Monitor>, Message, Symbols)| {
        st.0.iter_mut().for_each(|r| r.clone_from(&receiver));
    };
    let recv_ns = time(args, &mut receiving, prepare, |st, i| {
        wire::decode(&bufs[i], p, &mut st.2, &mut st.1).expect("own encoding");
        st.0[i].recv(p, &st.2, &st.1, &recv_sets[i % recv_sets.len()]);
    });
    black_box(&receiving.0);
    let mut selected: Vec<u32> = p.selected.iter().map(|s| s.1).collect();
    selected.sort();
    selected.dedup();
    Ok(Figures {
        workload: w.name.clone(),
        lifelines: p.lifelines.len(),
        subformulas: p.len(),
        variables: selected.len(),
        local_ns,
        send_ns,
        recv_ns,
        binary_bytes,
        json_bytes,
    })
}

/// The figures as a text table.
pub fn table(all: &[Figures]) -> String {
    let mut s = String::from(
        "| workload | lifelines | subformulas | variables | local ns | send ns | recv ns \
         | binary B | JSON B | JSON/binary |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for f in all {
        writeln!(
            s,
            "| {} | {} | {} | {} | {:.0} | {:.0} | {:.0} | {} | {} | {:.1} |",
            f.workload,
            f.lifelines,
            f.subformulas,
            f.variables,
            f.local_ns,
            f.send_ns,
            f.recv_ns,
            f.binary_bytes,
            f.json_bytes,
            f.json_bytes as f64 / f.binary_bytes as f64
        )
        .expect("string");
    }
    s
}
