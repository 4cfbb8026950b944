pub const LIMIT: usize = 10;
static mut COUNTER: u32 = 0;
pub(crate) struct Conf<'a> {
    pub name: &'a str,
    #[serde(default)]
    pub(crate) map: HashMap<String, Vec<u8>>,
    f: fn(i32) -> i32,
}
pub enum Shape { Circle { r: f64 }, Square(f64), #[default] Empty }
impl Conf<'_> {
    const DEFAULT: u8 = 1;
    fn run(&self) { const INNER: u8 = 2; let x = 1; }
}
