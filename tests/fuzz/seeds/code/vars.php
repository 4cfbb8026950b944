<?php
namespace App;
define("ROOT", __DIR__);
// define('COMMENTED', 1);
class User {
    public const TABLE = 'users';
    private ?string $name = null;
    protected static array $cache = [];
    public function __construct(private int $id) {}
    public function f() { $local = 1; static $count = 0; }
}
