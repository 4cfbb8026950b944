
package p
class Outer(private val svc: Service, count: Int) {
    val lazyValue: String by lazy { "x" }
    init { val tmp = 1 }
    fun f(x: Int): Int { val y = x; return y }
    companion object { const val TAG = "t" }
}
data class P(val x: Int, var y: Int)
val String.lastChar: Char get() = this[length - 1]
