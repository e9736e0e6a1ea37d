// SPDX-License-Identifier: MIT

package benchmark

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"fastcp/copier"
)

// The package comment's JSON schema names every key the report writes: a
// document with one of everything, its keys collected at every depth.
func TestJSONSchemaCommentNamesEveryKey(t *testing.T) {
	src, err := os.ReadFile("benchmark.go")
	if err != nil {
		t.Fatal(err)
	}
	comment, _, ok := strings.Cut(string(src), "\npackage benchmark\n")
	if !ok {
		t.Fatal("benchmark.go has no package clause")
	}
	r := Report{
		Sections:  []Section{{Rows: []Row{{Calls: callsOf(&copier.Result{})}}}},
		HashRates: []HashRate{{}},
		Notes:     []string{},
	}
	doc, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				keys[k] = true
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	var missing []string
	for k := range keys {
		if !strings.Contains(comment, `"`+k+`":`) {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the package comment's schema lacks %q", missing)
	}
	if len(keys) < 100 {
		t.Errorf("only %d keys in the document: %v", len(keys), keys)
	}
}
