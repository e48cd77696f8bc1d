package bridge

import (
	"reflect"

	"github.com/acphost/acphost/acpclient"
)

// notificationSize estimates the memory a held notification keeps alive:
// the notification itself plus everything reachable from it. Raw bytes are
// not always at hand (text deltas are decoded on a fast path), and the
// decoded form can be much larger than its JSON (an array of empty objects
// becomes an array of structs), so the estimate walks the decoded value
// rather than trusting either (the raw update held beside it is counted by
// earlyBuffer.add). Shared backing arrays are counted once per reference and
// allocator rounding is ignored: an upper bound up to that rounding.
func notificationSize(n *acpclient.SessionNotification) int64 {
	v := reflect.ValueOf(n).Elem()
	return int64(v.Type().Size()) + referencedSize(v)
}

// referencedSize is the memory v refers to beyond its own inline size.
// Decoded JSON is a tree, so the walk needs no cycle check.
func referencedSize(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return int64(v.Type().Elem().Size()) + referencedSize(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer {
			return referencedSize(e)
		}
		return int64(e.Type().Size()) + referencedSize(e) // boxed value
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		total := int64(v.Cap()) * int64(v.Type().Elem().Size())
		if holdsReferences(v.Type().Elem()) {
			for i := range v.Len() {
				total += referencedSize(v.Index(i))
			}
		}
		return total
	case reflect.Array:
		var total int64
		if holdsReferences(v.Type().Elem()) {
			for i := range v.Len() {
				total += referencedSize(v.Index(i))
			}
		}
		return total
	case reflect.Struct:
		var total int64
		for i := range v.NumField() {
			total += referencedSize(v.Field(i))
		}
		return total
	case reflect.Map:
		return mapSize(v)
	}
	return 0
}

func mapSize(v reflect.Value) int64 {
	if v.IsNil() {
		return 0
	}
	entry := int64(v.Type().Key().Size() + v.Type().Elem().Size())
	total := int64(v.Len()) * entry
	for it := v.MapRange(); it.Next(); {
		total += referencedSize(it.Key()) + referencedSize(it.Value())
	}
	return total
}

// holdsReferences reports whether values of t can refer to memory beyond
// their inline size, i.e. whether walking them can add anything.
func holdsReferences(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return holdsReferences(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsReferences(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}
