package bridge

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// camelKey is the shape of the keys of the Event JSON form: camelCase, or
// ACP's "_meta".
var camelKey = regexp.MustCompile(`^(_meta|[a-z][a-zA-Z0-9]*)$`)

// TestEventTypesHaveJSONTags walks every struct reachable from Event, and
// Policy: each exported field names its JSON key (camelCase) or opts out
// with "-", so the JSON form never falls back to Go field names.
func TestEventTypesHaveJSONTags(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.PkgPath() == "time" {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			where := path + "." + f.Name
			tag, ok := f.Tag.Lookup("json")
			name, _, _ := strings.Cut(tag, ",")
			switch {
			case !ok:
				t.Errorf("%s (%s) has no json tag", where, typ)
			case name == "-":
				continue
			case !camelKey.MatchString(name):
				t.Errorf("%s (%s): key %q is not camelCase", where, typ, name)
			}
			walk(f.Type, where)
		}
	}
	walk(reflect.TypeFor[Event](), "Event")
	walk(reflect.TypeFor[Policy](), "Policy")
	if len(seen) < 20 {
		t.Fatalf("walked only %d types", len(seen))
	}
}
