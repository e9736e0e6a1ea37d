// SPDX-License-Identifier: MIT

package output

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStatusLine(t *testing.T) {
	tests := []struct {
		s    lineState
		want string
	}{
		{lineState{verb: "copying", name: "'big.img'", done: 1288490188, total: 4294967296, files: 2, filesTotal: 10, rate: 456e6, elapsed: 3 * time.Second},
			"copying 'big.img': 1288490188 of 4294967296 bytes (1.1 GiB of 4 GiB, 29%), 2 of 10 files, 456 MB/s, 7s left"},
		{lineState{verb: "flushing", name: "'d/f'", done: 100, total: 100, files: 0, filesTotal: 1, rate: 50, elapsed: 2 * time.Second},
			"flushing 'd/f': 100 of 100 bytes (100 B of 100 B, 100%), 0.0 MB/s, 2s elapsed"},
		{lineState{verb: "copying", name: "'fifo'", done: 123456, total: -1, rate: 3.4e6, elapsed: 75 * time.Second},
			"copying 'fifo': 123456 bytes (120.5 KiB), 3.4 MB/s, 1m15s elapsed"},
		{lineState{verb: "copying", total: 0, filesTotal: 3},
			"copying: 0 of 0 bytes (0 B of 0 B, 100%), 0 of 3 files, 0.0 MB/s, 0s elapsed"},
	}
	for _, tt := range tests {
		if got := statusLine(tt.s); got != tt.want {
			t.Errorf("statusLine(%+v) =\n %q, want\n %q", tt.s, got, tt.want)
		}
	}
}

// progressKeys is the documented schema of --progress=json (the manual
// page's PROGRESS section): every key, always there.
var progressKeys = []string{"schema", "event", "elapsed_s", "state", "file", "bytes", "total_bytes", "percent", "files", "total_files", "bytes_per_s", "eta_s"}

// TestProgressJSON: the objects --progress=json writes, from start to end,
// and the one SIGUSR1 asks for, each a line of its own with every key.
func TestProgressJSON(t *testing.T) {
	var errb bytes.Buffer
	o := New("fastcp", &bytes.Buffer{}, &errb)
	p := o.StartProgressJSON(3000, 2)
	p.Doing("copying", "dir/a b")
	p.Add(1000)
	o.Status()
	p.FileDone()
	p.Doing("flushing", "dir/c")
	p.Add(2000)
	p.FileDone()
	p.Finish()
	lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
	var events []string
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not one JSON object a line: %q: %v", l, err)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := slices.Clone(progressKeys)
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			t.Errorf("keys %v, want %v", keys, want)
		}
		var j ProgressJSON
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			t.Fatal(err)
		}
		events = append(events, j.Event)
		if j.Schema != ProgressSchema || j.TotalBytes != 3000 || j.TotalFiles != 2 {
			t.Errorf("object %+v", j)
		}
		switch j.Event {
		case EventStart:
			if j.Bytes != 0 || j.Files != 0 || j.File != "" || j.Percent != 0 {
				t.Errorf("start: %+v", j)
			}
		case EventStatus:
			if j.Bytes != 1000 || j.Percent != 33 || j.File != "dir/a b" || j.State != "copying" || j.Files != 0 {
				t.Errorf("status: %+v", j)
			}
		case EventEnd:
			if j.Bytes != 3000 || j.Percent != 100 || j.Files != 2 || j.State != "done" || j.File != "" || j.ETAS != 0 {
				t.Errorf("end: %+v", j)
			}
		}
	}
	// A progress object a second: none in so short a run.
	if !slices.Equal(events, []string{EventStart, EventStatus, EventEnd}) {
		t.Errorf("events %v", events)
	}
	if got := reflect.TypeOf(ProgressJSON{}).NumField(); got != len(progressKeys) {
		t.Errorf("ProgressJSON has %d fields, the schema %d keys", got, len(progressKeys))
	}
}

// TestStatusWithoutABar: a run that draws nothing still answers a status
// request, with the human line; before the run has started counting, it
// says so.
func TestStatusWithoutABar(t *testing.T) {
	var errb bytes.Buffer
	o := New("fastcp", &bytes.Buffer{}, &errb)
	o.Status()
	if got := errb.String(); got != "fastcp: nothing copied yet\n" {
		t.Errorf("before counting: %q", got)
	}
	errb.Reset()
	p := o.StartCounting(8<<20, 1)
	p.Doing("copying", "x")
	p.Add(4 << 20)
	o.Status()
	if got := errb.String(); !strings.HasPrefix(got, "fastcp: copying 'x': 4194304 of 8388608 bytes (4 MiB of 8 MiB, 50%), ") || strings.Count(got, "\n") != 1 {
		t.Errorf("status: %q", got)
	}
	p.Finish()
	errb.Reset()
	o.Status()
	if got := errb.String(); !strings.HasPrefix(got, "fastcp: copying 'x': 4194304 of 8388608 bytes") {
		t.Errorf("after the end: %q", got)
	}
}
