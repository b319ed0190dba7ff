package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/model"
)

// TestDamageIsSaidInWords: a read that bbolt panics on, because a leaf
// page's element says its value is gigabytes long, is a DamagedError that
// says so in words: the Go runtime's own text ("runtime error: slice
// bounds out of range [::3031742324]") tells the user nothing.
func TestDamageIsSaidInWords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "weft.db")
	s := openT(t, path)
	putSession(t, s, "s")
	var ms []model.Message
	for i := range 300 {
		ms = append(ms, msg(uint64(i+1), model.RoleUser, fmt.Sprintf("message %d %s", i, strings.Repeat("x", 200)), t0))
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", ms) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const ps, header = 4096, 16
	damagedLeaves := 0
	for p := 2; (p+1)*ps <= len(b); p++ {
		pg := b[p*ps:]
		flags, count := binary.LittleEndian.Uint16(pg[8:]), binary.LittleEndian.Uint16(pg[10:])
		if flags != 0x02 || count == 0 {
			continue
		}
		// A leaf element is flags, pos, ksize, vsize (u32 each): the
		// first element's value now reaches far past the file.
		binary.LittleEndian.PutUint32(pg[header+12:], 0xb4b4b4b4)
		damagedLeaves++
	}
	if damagedLeaves == 0 {
		t.Fatal("the file has no leaf pages to damage")
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	st, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		assertInWords(t, err)
		return
	}
	defer st.Close()
	err = st.view(func(tx *Tx) error {
		return tx.Messages("s", 1, 1<<62, func(model.Message) error { return nil })
	})
	var de *DamagedError
	if !errors.As(err, &de) || !de.panicked {
		t.Fatalf("reading %d damaged leaves: %v, want the panic bbolt raised as a DamagedError: the test damages nothing it checks", damagedLeaves, err)
	}
	assertInWords(t, err)
}

func assertInWords(t *testing.T, err error) {
	t.Helper()
	for _, internal := range []string{"runtime error", "out of range [", "goroutine", "invalid memory address", "nil pointer"} {
		if strings.Contains(err.Error(), internal) {
			t.Errorf("the error shows Go's own text %q: %v", internal, err)
		}
	}
}
