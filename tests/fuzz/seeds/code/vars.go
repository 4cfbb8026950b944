package main

import "fmt"

var (
	ErrBad = fmt.Errorf("bad")
	a, b   = 1, 2
	cfg    struct {
		n int
	}
)

const (
	KindA Kind = iota
	KindB
)

type Server struct {
	Addr    string
	Handler http.Handler `json:"h"`
	sync.Mutex
	*log.Logger
	Name, Alias string
	inner   struct {
		depth int
	}
}

type Reader interface {
	Read(p []byte) (n int, err error)
	io.Closer
}

func main() {
	var local = 1
	x := 2
	fmt.Println(local, x)
}
