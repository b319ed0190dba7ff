package boltstore

import (
	"path/filepath"
	"testing"

	"weft/store"
	"weft/store/storetest"
)

// The bbolt file passes the store's conformance suite.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(filepath.Join(t.TempDir(), "weft.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
