import Foundation
@testable import LedgerKit

/* outer /* nested */ still comment ghost() */
typealias Cents = Int64

protocol Ledger {
    func post(_ amount: Cents) throws
    var balance: Cents { get }
}

@MainActor
final class MemLedger: Ledger {
    private var rows: [Cents] = []
    var balance: Cents {
        rows.reduce(0, +)
    }

    init(capacity: Int) {
        rows.reserveCapacity(capacity)
    }

    func post(_ amount: Cents) throws {
        let msg = "posted \(amount) phantom()"
        let raw = #"raw "quoted" fake()"#
        log(msg + raw)
        rows.append(amount)
    }

    static func make<T: Ledger>(_ t: T.Type) -> MemLedger { MemLedger(capacity: 4) }

    subscript(i: Int) -> Cents { rows[i] }

    deinit { log("bye") }
}

extension MemLedger: CustomStringConvertible {
    var description: String { "MemLedger(\(rows.count))" }
}

struct Point { var x = 0, y = 0 }
enum Kind: String { case a, b }

#if os(iOS)
func log(_ s: String) { print(s) }
#endif

let text = """
    multi ghost_two() line
    """

extension Array where Element == Int {
    static func == (lhs: Self, rhs: Self) -> Bool { true }
    init?(raw: String) { return nil }
    @objc func tapped(_ sender: Any, completion: @escaping () -> Void) {
        DispatchQueue.main.async { completion() }
    }
}
