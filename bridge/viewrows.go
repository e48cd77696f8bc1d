package bridge

// rowIndex maps tool call ids to the positions of their rows in a
// SessionView's Tools, oldest first. Without it every tool event scanned
// all earlier rows: a replayed session of many thousand calls spent almost
// all its time there (quadratic in the calls).
type rowIndex struct {
	byID map[string][]int
	// The slice indexed, as its first element and length: Tools changed
	// outside Apply (or by a copy of the view) no longer matches.
	first *ToolRow
	n     int
}

// index returns the view's row index, building it if Tools is not what
// it indexed.
func (v *SessionView) index() *rowIndex {
	if x := v.rows; x.indexes(v, 0) {
		return x
	}
	x := &rowIndex{byID: make(map[string][]int, len(v.Tools))}
	for i := range v.Tools {
		id := v.Tools[i].Tool.ID
		x.byID[id] = append(x.byID[id], i)
	}
	x.mark(v)
	v.rows = x
	return x
}

// indexes reports whether x is v's index of all but its last extra rows.
func (x *rowIndex) indexes(v *SessionView, extra int) bool {
	if x == nil || x.n != len(v.Tools)-extra {
		return false
	}
	return x.n == 0 || x.first == &v.Tools[0]
}

// rowAdded records the row just appended to Tools; an index that did not
// cover the rows before it is dropped, to be rebuilt when next needed.
func (v *SessionView) rowAdded() {
	x := v.rows
	if !x.indexes(v, 1) {
		v.rows = nil
		return
	}
	i := len(v.Tools) - 1
	id := v.Tools[i].Tool.ID
	x.byID[id] = append(x.byID[id], i)
	x.mark(v)
}

func (x *rowIndex) mark(v *SessionView) {
	x.n, x.first = len(v.Tools), nil
	if x.n > 0 {
		x.first = &v.Tools[0]
	}
}
