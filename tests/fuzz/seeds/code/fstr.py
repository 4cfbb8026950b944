class Lock:
    def __init__(self):
        self._state = 0
    def __repr__(self):
        a = f"<{self._state.value!r} n={len(self._w)}>"
        b = F"{{x}} {d['k']:>{w}} {fmt(x)=}"
        c = rf'''
  {total} {'q'}'''
        return f'{a:{b}{c}}' + f"{lambda: 1}" + f"{"
