package sealstore_test

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"rewind/engine/internal/sealstore"
	"rewind/engine/seal"
	"rewind/store"
	"rewind/store/memory"
)

// optionalInterfaces are the interfaces store declares beside Store, read
// from its source, each with its methods: a new one is found here without
// being listed. Tenancy is left out: the tenant commands reach it on the
// backend beneath every wrapper (store.Unwrap), by design.
func optionalInterfaces(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("../../../store/*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() || ts.Name.Name == "Store" || ts.Name.Name == "Tenancy" {
				return true
			}
			it, ok := ts.Type.(*ast.InterfaceType)
			if !ok {
				return true
			}
			for _, m := range it.Methods.List {
				for _, name := range m.Names {
					out[ts.Name.Name] = append(out[ts.Name.Name], name.Name)
				}
			}
			return true
		})
	}
	if len(out) < 4 {
		t.Fatalf("found only %v in store's source: the parse went wrong", out)
	}
	return out
}

// TestForwardsEveryOptionalInterface: both store wrappers (this one and
// store.Tenanted), over a backend that has every optional store
// interface, have each one's methods, so a type assertion through either
// finds what the backend can do (rekey through a tenant's handle once
// failed for want of Tenanted.Reseal).
func TestForwardsEveryOptionalInterface(t *testing.T) {
	tenanted, err := store.ForTenant(context.Background(), memory.New(), "")
	if err != nil {
		t.Fatal(err)
	}
	wrappers := map[string]reflect.Type{
		"sealstore.Store": reflect.TypeOf(sealstore.New(memory.New(), keys(t), true, true)),
		"store.Tenanted":  reflect.TypeOf(tenanted),
	}
	backend := reflect.TypeOf(memory.New())
	for iface, methods := range optionalInterfaces(t) {
		for name, typ := range wrappers {
			for _, m := range methods {
				if _, ok := backend.MethodByName(m); !ok {
					t.Fatalf("the memory store lacks %s.%s: this test needs a backend with every optional interface", iface, m)
				}
				if _, ok := typ.MethodByName(m); !ok {
					t.Errorf("%s lacks %s.%s: forward it to the wrapped store", name, iface, m)
				}
			}
		}
	}
	if _, ok := reflect.TypeOf(&sealstore.Store{}).MethodByName("SetTxHook"); !ok {
		t.Error("sealstore.Store lacks SetTxHook: the worker's mid-transaction kill point would not reach the store")
	}
}

func keys(t *testing.T) *seal.Keys {
	t.Helper()
	k, err := seal.ParseKey([]byte("k1:" + strings.Repeat("A", 43) + "="))
	if err != nil {
		t.Fatal(err)
	}
	return seal.NewKeys(k)
}

// TestSealsOnTheWayInAndOpensOnTheWayOut: the backend holds a draft
// sealed, a reader through the wrapper gets it back, and a wrapper without
// the key cannot (Rekey's rotation through Reseal is engine/ticket's
// sealed_test).
func TestSealsOnTheWayInAndOpensOnTheWayOut(t *testing.T) {
	ctx := context.Background()
	raw := memory.New()
	st := sealstore.New(raw, keys(t), true, true)
	body := []byte(`{"secret":"sentinel-7f3"}`)
	if _, _, err := st.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: body}); err != nil {
		t.Fatal(err)
	}
	stored, err := raw.Draft(ctx, "t", "op")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored.Body, []byte("sentinel-7f3")) || !seal.Is(stored.Body) {
		t.Fatalf("the backend keeps the draft in the clear: %s", stored.Body)
	}
	got, err := st.Draft(ctx, "t", "op")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Body, body) {
		t.Fatalf("read through the wrapper: %s, want %s", got.Body, body)
	}
	blind := sealstore.New(raw, nil, false, false)
	if _, err := blind.Draft(ctx, "t", "op"); err == nil {
		t.Fatal("a wrapper without the key opened a sealed draft")
	}
}
