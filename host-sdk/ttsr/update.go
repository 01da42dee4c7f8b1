package ttsr

// Update replaces the Manager's rules with set's, keeping the session going:
// a rule that is still there keeps its firing state by name (a rule that
// fired once does not fire again because its file was edited), a new rule
// starts matching with the next Feed, and a removed rule stops. The current
// turn's streamed text is kept, so a match can still complete across the
// update.
func (m *Manager) Update(set *Set) {
	m.mu.Lock()
	defer m.mu.Unlock()
	type firing struct {
		fired bool
		turn  int
	}
	was := make(map[string]firing, len(m.rules))
	for _, r := range m.rules {
		if _, dup := was[r.name]; !dup {
			was[r.name] = firing{r.fired, r.firedTurn}
		}
	}
	m.set = set
	m.rules, m.triggers, m.unfiltered = nil, nil, nil
	m.build()
	for _, r := range m.rules {
		if f, ok := was[r.name]; ok {
			r.fired, r.firedTurn = f.fired, f.turn
		}
	}
	// Literal positions are ids into the old set's literals: find the new
	// set's in the text each stream still holds.
	for _, st := range m.streams {
		st.lastLit = make([]int64, len(set.lits))
		for i := range st.lastLit {
			st.lastLit[i] = -1
		}
		st.seen = st.seen[:0]
		if st.scanned > 0 {
			m.trackLits(st, 0, st.scanned)
		}
	}
}
