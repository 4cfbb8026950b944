<html><?php if ($x): ?> fake_html() <?php endif; ?>
<?php
namespace Acme\Billing;

use Acme\Models\Invoice;
use function Acme\Support\fmt;
require_once 'boot.php';

# ghost() in a hash comment
#[Attr(1)]
final class Ledger extends Base implements Countable
{
    use Logs;

    public function __construct(private array $rows = []) {
        parent::__construct();
    }

    public static function total(Invoice $inv): float {
        $f = function ($x) use ($inv) { return helper($x); };
        $t = "sum {$inv->id} phantom()";
        $h = <<<TXT
        heredoc_text() }
        TXT;
        return fmt(array_sum($this->rows)) + $f(1);
    }

    abstract protected function render(
        Invoice $inv
    ): string;

    public function count(): int { return count($this->rows); }
}

interface Renderer {
    public function draw(): string;
}

function helper(int $x): int { return $x * 2; }
?>
tail { text
