// Package layout holds the tests that keep weft's design true of its
// tree: which package may import which, where the environment is read,
// who opens store transactions, how long a file may grow, and that every
// exported identifier says what it is.
package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "weft"

// maxLines is how long a non-test Go file may be.
const maxLines = 800

// pkg is one package of the tree, as its non-test files have it.
type pkg struct {
	path    string // import path: weft/ops/thread
	dir     string
	files   map[string]*ast.File // by file name, non-test files only
	imports map[string]bool      // weft/... imports of the non-test files
}

// tree reads every package of the module below its root.
func tree(t *testing.T) (map[string]*pkg, *token.FileSet) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	fset := token.NewFileSet()
	pkgs := map[string]*pkg{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		rel, _ := filepath.Rel(root, dir)
		ip := module
		if rel != "." {
			ip = module + "/" + filepath.ToSlash(rel)
		}
		p := pkgs[ip]
		if p == nil {
			p = &pkg{path: ip, dir: dir, files: map[string]*ast.File{}, imports: map[string]bool{}}
			pkgs[ip] = p
		}
		p.files[filepath.Base(path)] = f
		for _, im := range f.Imports {
			s, _ := strconv.Unquote(im.Path.Value)
			if s == module || strings.HasPrefix(s, module+"/") {
				p.imports[s] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs, fset
}

// under reports whether import path p is prefix or inside it.
func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }

// TestDependenciesPointOneWay: cmd -> tui, faces -> ops/tools ->
// ops/reads, ops/ingest -> ops/search -> ops -> ops/thread, ops/assemble,
// ops/summary, store, formats, internal -> model; tui -> themes; store ->
// store/boltfile, store/jsonpack, which only store imports. model imports nothing of
// ours, store knows nothing of operations' meaning, ops nothing of
// screens or protocols, and the faces never touch the store
// (TestFacesStandApart: nor one another).
func TestDependenciesPointOneWay(t *testing.T) {
	pkgs, _ := tree(t)
	// forbidden lists, for a package (and those below it), what it must
	// not import (nor anything below those).
	forbidden := map[string][]string{
		"weft/model": {"weft"}, // nothing of ours
		// The store says what the Service needs; the backends below it
		// say how. The interface knows no backend.
		"weft/store":         {"weft/ops", "weft/formats", "weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/internal", "weft/store/boltstore"},
		"weft/formats":       {"weft/ops", "weft/store", "weft/tui", "weft/cmd", "weft/themes", "weft/demo"},
		"weft/internal":      {"weft/ops", "weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/formats"},
		"weft/themes":        {"weft/ops", "weft/store", "weft/tui", "weft/cmd", "weft/formats", "weft/demo"},
		"weft/ops":           {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/httpx", "weft/ops/ingest", "weft/ops/reads", "weft/ops/search", "weft/ops/tools", "weft/ops/opstest", "weft/ops/memory"},
		"weft/ops/thread":    {"weft/ops", "weft/store", "weft/formats", "weft/tui", "weft/cmd", "weft/internal"},
		"weft/ops/assemble":  {"weft/ops", "weft/store", "weft/tui", "weft/cmd"},
		"weft/ops/summary":   {"weft/ops", "weft/store", "weft/tui", "weft/cmd"},
		"weft/ops/timeparse": {"weft"},
		// The diff of a stored thread against its effective one is pure:
		// it reads a view, operations and heads, nothing of the engine.
		"weft/ops/diff": {"weft/ops", "weft/store", "weft/formats", "weft/tui", "weft/cmd", "weft/themes", "weft/demo"},
		// The engine's rooms: below the registry, each below the next.
		"weft/ops/search": {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/httpx", "weft/ops/reads", "weft/ops/tools", "weft/ops/ingest", "weft/ops/memory"},
		"weft/ops/ingest": {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/httpx", "weft/ops/reads", "weft/ops/search", "weft/ops/tools", "weft/ops/memory"},
		"weft/ops/memory": {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/httpx", "weft/ops/tools", "weft/ops/ingest"},
		"weft/ops/reads":  {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/httpx", "weft/ops/tools", "weft/ops/ingest", "weft/ops/memory"},
		// The registry, and the one way to reach it here or there, sit
		// below every face and the command line.
		"weft/ops/tools": {"weft/store", "weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/httpx"},
		// What the engine's tests share: the fixture, over the core and
		// store and no room above them, so that every room's own tests
		// may use it; and the fixture with the registry, for the tests
		// above it.
		"weft/ops/opstest":         {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/httpx", "weft/ops/ingest", "weft/ops/reads", "weft/ops/search", "weft/ops/tools"},
		"weft/ops/tools/toolstest": {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/httpx"},
		// The HTTP the faces share sits below them all.
		"weft/ops/httpx":     {"weft/store", "weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen"},
		"weft/ops/mcpserver": {"weft/store", "weft/tui", "weft/cmd"},
		"weft/ops/proxy":     {"weft/store", "weft/tui", "weft/cmd"},
		"weft/ops/relay":     {"weft/store", "weft/tui", "weft/cmd"},
		"weft/ops/listen":    {"weft/store", "weft/tui", "weft/cmd", "weft/ops/tools"},
		// What the faces' tests share: a seeded service (demo's thread)
		// and clients, but no face, so that every face's tests may use it.
		"weft/ops/internal/facetest": {"weft/tui", "weft/cmd", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen"},
		"weft/tui":                   {"weft/store", "weft/cmd"},
		"weft/demo":                  {"weft/store", "weft/tui", "weft/cmd", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen"},
		"weft/internal/tokens":       {"weft"},
		"weft/internal/fuzzy":        {"weft"},
		"weft/internal/english":      {"weft"},
		"weft/internal/jsonargs":     {"weft"},
		// bbolt's page format, read as bytes, knows nothing of what the
		// store keeps in the pages (and only the store imports it).
		"weft/store/boltfile": {"weft"},
		// A JSON document packed over a text it repeats: bytes, nothing
		// of messages (and only the store imports it).
		"weft/store/jsonpack": {"weft"},
	}
	// A package may always import itself and model (but model itself
	// may import nothing of ours), and a package below it unless its
	// rule names that one (ops must not import ops/ingest).
	for _, p := range sortedPkgs(pkgs) {
		// The most specific rule that applies.
		var rule string
		for r := range forbidden {
			if under(p.path, r) && len(r) > len(rule) {
				rule = r
			}
		}
		if rule == "" {
			continue
		}
		for im := range p.imports {
			if im == "weft/model" && p.path != "weft/model" {
				continue
			}
			for _, f := range forbidden[rule] {
				if under(im, p.path) && !(f != p.path && under(f, p.path)) {
					continue
				}
				// A room's rule may forbid what the room sits in
				// (ops/thread, ops/assemble: nothing of ops), but a
				// package below the room, under the room's rule
				// (ops/thread/x, the test support
				// ops/assemble/assembletest), may import the room.
				if under(im, f) && !(p.path != rule && im == rule) {
					t.Errorf("%s imports %s, which the layout forbids (rule for %s: nothing of %s)", p.path, im, rule, f)
				}
			}
		}
	}
	// Some rooms are one package's own: only the bbolt backend reads a
	// file's pages as bytes (what it opens, checks and salvages), so the
	// rest reach a file through its checks; its records' encodings are
	// its own too.
	// (jsonpack packs parts within a message's record, which
	// store/record encodes.)
	ownedBy := map[string]string{
		"weft/store/boltfile": "weft/store/boltstore", "weft/store/jsonpack": "weft/store/boltstore",
		"weft/store/record": "weft/store/boltstore",
	}
	ownedToo := map[string]string{"weft/store/jsonpack": "weft/store/record"}
	for _, p := range sortedPkgs(pkgs) {
		for im := range p.imports {
			for room, owner := range ownedBy {
				if under(im, room) && !under(p.path, room) && p.path != owner && p.path != ownedToo[room] {
					t.Errorf("%s imports %s, which is %s's own", p.path, im, owner)
				}
			}
		}
	}
	// And nothing imports cmd.
	for _, p := range pkgs {
		for im := range p.imports {
			if under(im, "weft/cmd") {
				t.Errorf("%s imports %s", p.path, im)
			}
		}
	}
}

// faces are the packages that put the Service before the world, each a
// thin adapter over it: MCP and /api, the context proxy, the relay, and
// the listener that serves them.
var faces = []string{"weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen"}

// faceOf is the face import path p is (or is below), or "".
func faceOf(p string) string {
	for _, f := range faces {
		if under(p, f) {
			return f
		}
	}
	return ""
}

// TestFacesStandApart: no face imports another (the listener takes the
// others' paths from its caller, and cmd/weft composes them), and the
// TUI imports none: it reaches the data through ops.Service, as every
// face does.
func TestFacesStandApart(t *testing.T) {
	pkgs, _ := tree(t)
	for _, p := range sortedPkgs(pkgs) {
		own := faceOf(p.path)
		for im := range p.imports {
			other := faceOf(im)
			switch {
			case other == "" || other == own:
			case own != "":
				t.Errorf("%s imports %s: a face imports no other face (cmd/weft composes them)", p.path, im)
			case under(p.path, "weft/tui"):
				t.Errorf("%s imports the face %s: the TUI reaches the data through ops.Service", p.path, im)
			}
		}
	}
}

func sortedPkgs(pkgs map[string]*pkg) []*pkg {
	out := make([]*pkg, 0, len(pkgs))
	for _, p := range pkgs {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *pkg) int { return strings.Compare(a.path, b.path) })
	return out
}

// TestOnlyOpsOpensTransactions: nothing but the engine (ops and its rooms
// that read through the service's store: ingest, reads, search, tools)
// and store names a store transaction, so every read and write of a
// session goes through the service, and every write through its one
// write path; the faces, the TUI and the command line never do. The
// rooms read in transactions (ingest's Prepare is given the write's, and
// a thread's past imports are looked up in a read of its own), but open
// no write transaction: they never call Update.
func TestOnlyOpsOpensTransactions(t *testing.T) {
	pkgs, fset := tree(t)
	// The engine's rooms read in transactions; only ops writes.
	readers := map[string]bool{"weft/ops/ingest": true, "weft/ops/reads": true, "weft/ops/search": true, "weft/ops/tools": true, "weft/ops/memory": true, "weft/ops/sessionmatch": true}
	for _, p := range sortedPkgs(pkgs) {
		if under(p.path, "weft/store") || p.path == "weft/ops" || p.path == "weft/internal/benchdata" {
			continue // benchdata writes the benchmarks' files directly, for speed
		}
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if readers[p.path] {
					if sel.Sel.Name == "Update" {
						t.Errorf("%s calls Update: %s writes through the Service's write path only", fset.Position(sel.Pos()), p.path)
					}
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "store" && sel.Sel.Name == "Tx" {
					t.Errorf("%s names store.Tx: only ops opens store transactions", fset.Position(sel.Pos()))
				}
				return true
			})
		}
	}
}

// TestEnvironmentIsReadByTheCLIOnly: configuration reaches every package
// as values; only cmd/ reads the environment.
func TestEnvironmentIsReadByTheCLIOnly(t *testing.T) {
	pkgs, fset := tree(t)
	env := map[string]bool{"Getenv": true, "Setenv": true, "LookupEnv": true, "Environ": true, "Unsetenv": true, "Clearenv": true, "ExpandEnv": true}
	for _, p := range sortedPkgs(pkgs) {
		if under(p.path, "weft/cmd") || p.path == "weft/internal/benchdata" || p.path == "weft/e2e" {
			continue
		}
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" && env[sel.Sel.Name] {
						t.Errorf("%s reads the environment (os.%s): pass the value in from cmd", fset.Position(sel.Pos()), sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

// TestFilesStaySmall: no non-test Go file is longer than maxLines.
func TestFilesStaySmall(t *testing.T) {
	pkgs, fset := tree(t)
	for _, p := range sortedPkgs(pkgs) {
		for _, f := range p.files {
			tf := fset.File(f.Pos())
			if n := tf.LineCount(); n > maxLines {
				t.Errorf("%s has %d lines; split it (at most %d)", tf.Name(), n, maxLines)
			}
		}
	}
}

// TestExportedIdentifiersAreDocumented: every exported function, method,
// type, constant and variable has a doc comment (a const or var in a
// documented group counts).
func TestExportedIdentifiersAreDocumented(t *testing.T) {
	pkgs, fset := tree(t)
	var missing []string
	for _, p := range sortedPkgs(pkgs) {
		for _, f := range p.files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Name.IsExported() && d.Doc == nil && exportedRecv(d) {
						missing = append(missing, fmt.Sprintf("%s: func %s", fset.Position(d.Pos()), d.Name.Name))
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
								missing = append(missing, fmt.Sprintf("%s: type %s", fset.Position(s.Pos()), s.Name.Name))
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() && s.Doc == nil && s.Comment == nil && d.Doc == nil {
									missing = append(missing, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), n.Name))
								}
							}
						}
					}
				}
			}
		}
	}
	for _, m := range missing {
		t.Errorf("no doc comment: %s", m)
	}
}

// exportedRecv reports whether a function is a plain function or a
// method of an exported type: methods of unexported types are not
// documentation anyone reads.
func exportedRecv(d *ast.FuncDecl) bool {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return true
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return true
		}
	}
}
