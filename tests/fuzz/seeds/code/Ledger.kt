
package acme.billing

import kotlin.math.max
import acme.util.*

typealias Cents = Long

/* outer /* nested fake(1) */ still comment ghost(2) */
data class Money(val cents: Cents) {
    operator fun plus(o: Money) = Money(cents + o.cents)
}

interface Ledger {
    fun post(amount: Money)
    val count: Int
}

class MemLedger(private val cap: Int) : Ledger {
    private val items = mutableListOf<Money>()
    override val count: Int get() = items.size

    override fun post(amount: Money) {
        val note = """raw phantom(3) "q" ${amount.cents}"""
        items.add(amount)
        log("posted $amount $note")
    }

    companion object {
        fun create(): MemLedger = MemLedger(max(16, 1))
    }
}

fun <T> List<T>.second(): T {
    return this[1]
}

private fun log(s: String) = println(s)

object Registry {
    fun find(name: String): Ledger? = emptyMap<String, Ledger>()[name]
}
