use std::fmt;
pub trait Area { fn area(&self) -> f64; }
pub struct Sq(f64);
impl Area for Sq { fn area(&self) -> f64 { self.0 * self.0 } }
macro_rules! sq { ($x:expr) => { Sq($x) }; }
fn main() { let s = sq!(2.0); let r = r#"raw "x" "#; println!("{}", s.area()); }
