// owner_go.go - the reference for qualified xref on Go (owner_cmp.py
// --go): type-checks the package in DIR (not its _test.go files, and only
// the files the build constraints take for this machine, in name order: with
// a file per platform the check is otherwise left to the order of a map and
// its results change from run to run) with go/types, importing the standard library from source, and prints one
// JSON object: every struct field access `x.f` in the package's files with
// the named struct type that declares f (through embedding too), and every
// (type, field) the package declares.
//
// Usage: go run owner_go.go DIR
package main

import (
	"encoding/json"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type site struct {
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Col   int    `json:"col"`
	Owner string `json:"owner"`
	Name  string `json:"name"`
}

func main() {
	dir := os.Args[1]
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		if strings.HasSuffix(fi.Name(), "_test.go") {
			return false
		}
		ok, err := build.Default.MatchFile(dir, fi.Name())
		return err == nil && ok
	}, 0)
	if err != nil {
		panic(err)
	}
	declAt := map[token.Pos]string{} // field name position -> its struct type
	var declared [][2]string
	var sites []site
	for _, pkg := range pkgs {
		var names []string
		for name := range pkg.Files {
			names = append(names, name)
		}
		sort.Strings(names)
		var files []*ast.File
		for _, name := range names {
			f := pkg.Files[name]
			files = append(files, f)
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fl := range st.Fields.List {
					for _, nm := range fl.Names {
						declAt[nm.Pos()] = ts.Name.Name
						declared = append(declared, [2]string{ts.Name.Name, nm.Name})
					}
				}
				return true
			})
		}
		conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil),
			Error: func(error) {}}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf.Check(pkg.Name, fset, files, info)
		for sel, s := range info.Selections {
			if s.Kind() != types.FieldVal {
				continue
			}
			owner, ok := declAt[s.Obj().Pos()]
			if !ok {
				continue // a field of a type outside the package
			}
			p := fset.Position(sel.Sel.Pos())
			rel, _ := filepath.Rel(dir, p.Filename)
			sites = append(sites, site{rel, p.Line, p.Column, owner, sel.Sel.Name})
		}
	}
	json.NewEncoder(os.Stdout).Encode(map[string]interface{}{
		"sites": sites, "declared": declared})
}
