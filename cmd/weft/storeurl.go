package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"

	"weft/ops/listen"
	"weft/store"
	"weft/store/pgstore"
)

// isStoreURL reports whether db names a database server (postgres://…,
// --store or $WEFT_STORE) rather than a bbolt file.
func isStoreURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// openServer opens the PostgreSQL database at url.
func openServer(url string) (store.Store, error) {
	return pgstore.Open(context.Background(), url)
}

// sidePath is where a file that goes beside the database goes (ext:
// ".log"): beside the file, or, for a server, in weft's data folder,
// named for the server.
func sidePath(db, ext string) string {
	if !isStoreURL(db) {
		return db + ext
	}
	h := sha256.Sum256([]byte(db))
	return filepath.Join(dataDir(), "weft", "store-"+hex.EncodeToString(h[:4])+ext)
}

// addrFileOf is where the weft holding db writes its listener's address
// for others to relay to; none for a server, which every weft opens
// itself.
func addrFileOf(db string) string {
	if isStoreURL(db) {
		return ""
	}
	return listen.AddrFileOf(db)
}
