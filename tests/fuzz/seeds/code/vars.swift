enum Dir { case up, down
  case left(Int)
  indirect case node(Dir)
}
struct Cfg {
    private(set) var count = 0
    @Published var title: String = ""
    lazy var cache = [String: Int]()
    func f() { let local = 1; var other = 2 }
    var computed: Int { let t = 3; return t }
}
