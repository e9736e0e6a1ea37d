// SPDX-License-Identifier: MIT

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Everything fastcp prints goes through package output: no product source
// outside output/ prints with fmt or log, names os.Stdout or os.Stderr
// (main alone hands them to run), or writes to a writer it calls stdout or
// stderr itself.
func TestEverythingPrintedGoesThroughOutput(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case "output", "scripts", "tools", "integration_test", "vendor":
				return filepath.SkipDir
			}
			if path != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, p := range directPrints(f) {
			t.Errorf("%s: %s: print through package output instead", fset.Position(p.pos), p.what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d source files read", files)
	}
}

type directPrint struct {
	pos  token.Pos
	what string
}

// directPrints finds the ways of printing around package output in f.
func directPrints(f *ast.File) []directPrint {
	var found []directPrint
	add := func(n ast.Node, what string) { found = append(found, directPrint{n.Pos(), what}) }
	for _, imp := range f.Imports {
		if imp.Path.Value == `"log"` {
			add(imp, "imports log")
		}
	}
	// main's own func main hands os.Stdout and os.Stderr to run.
	var allowed *ast.FuncDecl
	if f.Name.Name == "main" {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "main" {
				allowed = fd
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if n == allowed && allowed != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if pkg, ok := n.X.(*ast.Ident); ok && pkg.Name == "os" && (n.Sel.Name == "Stdout" || n.Sel.Name == "Stderr") {
				add(n, "os."+n.Sel.Name)
			}
		case *ast.CallExpr:
			switch fun := n.Fun.(type) {
			case *ast.Ident:
				if fun.Name == "print" || fun.Name == "println" {
					add(n, fun.Name)
				}
			case *ast.SelectorExpr:
				name := fun.Sel.Name
				if pkg, ok := fun.X.(*ast.Ident); ok {
					switch {
					case pkg.Name == "fmt" && strings.HasPrefix(name, "Print"):
						add(n, "fmt."+name)
					case pkg.Name == "fmt" && strings.HasPrefix(name, "Fprint") && len(n.Args) > 0:
						// Into a local buffer (&b) is formatting, not printing.
						if u, ok := n.Args[0].(*ast.UnaryExpr); !ok || u.Op != token.AND {
							add(n, "fmt."+name)
						}
					case (pkg.Name == "io" || pkg.Name == "json") && len(n.Args) > 0 && isStdName(n.Args[0]):
						add(n, pkg.Name+"."+name+" to "+n.Args[0].(*ast.Ident).Name)
					case isStdName(pkg) && strings.HasPrefix(name, "Write"):
						add(n, pkg.Name+"."+name)
					}
				}
			}
		}
		return true
	})
	return found
}

// isStdName reports whether e is a variable named as the standard streams.
func isStdName(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && (id.Name == "stdout" || id.Name == "stderr")
}
