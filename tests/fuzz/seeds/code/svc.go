package svc
import ("fmt"; "strings")
type Shape interface { Area() float64 }
type Sq struct { s float64 }
func (q *Sq) Area() float64 { return q.s * q.s }
func Total(v []Shape) float64 { t := 0.0; for _, s := range v { t += s.Area() }; fmt.Println(`raw`); return t }
