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

// TestDependenciesPointOneWay: cmd -> tui, ops/mcpserver -> ops/ingest ->
// ops -> ops/thread, ops/assemble, ops/summary, store, formats, internal ->
// model; tui -> themes. model imports nothing of ours, store knows nothing
// of operations' meaning, ops nothing of screens or protocols, and the
// faces never touch the store.
func TestDependenciesPointOneWay(t *testing.T) {
	pkgs, _ := tree(t)
	// forbidden lists, for a package (and those below it), what it must
	// not import (nor anything below those).
	forbidden := map[string][]string{
		"weft/model":            {"weft"}, // nothing of ours
		"weft/store":            {"weft/ops", "weft/formats", "weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/internal"},
		"weft/formats":          {"weft/ops", "weft/store", "weft/tui", "weft/cmd", "weft/themes", "weft/demo"},
		"weft/internal":         {"weft/ops", "weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/formats"},
		"weft/themes":           {"weft/ops", "weft/store", "weft/tui", "weft/cmd", "weft/formats", "weft/demo"},
		"weft/ops":              {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/ingest", "weft/ops/reads", "weft/ops/search", "weft/ops/tools", "weft/ops/opstest"},
		"weft/ops/ingest":       {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/reads", "weft/ops/search", "weft/ops/tools"},
		"weft/ops/search":       {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/reads", "weft/ops/tools", "weft/ops/ingest"},
		"weft/ops/reads":        {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/tools", "weft/ops/ingest"},
		"weft/ops/tools":        {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen"},
		"weft/ops/thread":       {"weft/ops", "weft/store", "weft/formats", "weft/tui", "weft/cmd", "weft/internal"},
		"weft/ops/assemble":     {"weft/ops", "weft/store", "weft/tui", "weft/cmd"},
		"weft/ops/summary":      {"weft/ops", "weft/store", "weft/tui", "weft/cmd"},
		"weft/ops/timeparse":    {"weft"},
		"weft/ops/mcpserver":    {"weft/store", "weft/tui", "weft/cmd"},
		"weft/tui":              {"weft/store", "weft/ops/mcpserver", "weft/cmd"},
		"weft/demo":             {"weft/store", "weft/tui", "weft/cmd", "weft/ops/mcpserver"},
		"weft/internal/tokens":  {"weft"},
		"weft/internal/fuzzy":   {"weft"},
		"weft/internal/english": {"weft"},
		// What the engine's tests share: the fixture, over the core and
		// store and no room above them, so that every room's own tests
		// may use it; and the fixture with the registry, for the tests
		// above it.
		"weft/ops/opstest":         {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen", "weft/ops/ingest", "weft/ops/reads", "weft/ops/search", "weft/ops/tools"},
		"weft/ops/tools/toolstest": {"weft/tui", "weft/cmd", "weft/themes", "weft/demo", "weft/ops/mcpserver", "weft/ops/proxy", "weft/ops/relay", "weft/ops/listen"},
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
	// And nothing imports cmd.
	for _, p := range pkgs {
		for im := range p.imports {
			if under(im, "weft/cmd") {
				t.Errorf("%s imports %s", p.path, im)
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
	readers := map[string]bool{"weft/ops/ingest": true, "weft/ops/reads": true, "weft/ops/search": true, "weft/ops/tools": true}
	for _, p := range sortedPkgs(pkgs) {
		if p.path == "weft/store" || p.path == "weft/ops" || p.path == "weft/internal/benchdata" {
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
