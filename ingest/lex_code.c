/*
 * lex_code.c - the per-language lexer pass that blanks comments and the
 * contents of string and character literals before symbols are matched, so a
 * name inside a comment or a string never becomes a reference. Blanking
 * replaces bytes with spaces and keeps every newline and every quote
 * character: byte offsets, lines and columns of the copy equal the source's.
 *
 * Handled: // and block comments (nested in Rust), "..." and '...' with
 * backslash escapes, C++ raw strings R"d(...)d", Go and JS backquoted strings
 * (a JS/TS template's ${expressions} stay code), Rust raw strings r#"..."# and
 * lifetimes ('a is not a char literal), JS regex literals after an operator,
 * C# verbatim (@"..."), interpolated and raw ("""...""") strings, Kotlin raw
 * strings and nested comments, Swift multi-line and raw (#"..."#) strings
 * and nested comments, Python # comments, prefixed and triple-quoted
 * strings (an f-string's {expressions} stay code), PHP (lex_php: the text
 * outside <?php ... ?> and the tags themselves, # comments but not #[
 * attributes, strings over several lines, heredoc and nowdoc), Ruby
 * (lex_ruby: # and =begin comments, %-literals, heredocs, regex literals).
 * For C/C++ and C# a second copy also blanks preprocessor directives
 * (continuation lines included), so brace matching is not confused by
 * macro bodies. It is a lexer for blanking
 * only, not a tokenizer: keywords and identifiers are left to sym_code.c.
 */
#include "chunk_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Blanks dst[a..b) except newlines. */
static void blank(char *dst, size_t a, size_t b) {
  for (size_t i = a; i < b; i++)
    if (dst[i] != '\n')
      dst[i] = ' ';
}

/* End (exclusive) of a quoted literal opened at src[i] with quote q, with
 * backslash escapes; stops at a newline when !multiline. */
static size_t quoted_end(const char *s, size_t n, size_t i, char q,
                         int multiline) {
  size_t j = i + 1;
  while (j < n) {
    if (s[j] == '\\' && j + 1 < n) {
      j += 2;
      continue;
    }
    if (s[j] == q)
      return j + 1;
    if (s[j] == '\n' && !multiline)
      return j;
    j++;
  }
  return n;
}

/* A quoted literal opened at s[i] (as quoted_end): its body blanked, the
 * quotes kept; returns its end. */
static size_t blank_quoted(const char *s, size_t n, size_t i, char q,
                           int multiline, char *d) {
  size_t j = quoted_end(s, n, i, q, multiline);
  if (j > i + 1)
    blank(d, i + 1, s[j - 1] == q ? j - 1 : j);
  return j;
}

static int ident_char(unsigned char ch) {
  return ch == '_' || ch == '$' || (ch >= '0' && ch <= '9') ||
         (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch >= 0x80;
}

/* Previous non-blank byte of the blanked copy before i, or 0. */
static char prev_sig(const char *d, size_t i) {
  while (i > 0) {
    char ch = d[--i];
    if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
      return ch;
  }
  return 0;
}

/* 1 when the Python string whose quote is s[i] has an f prefix (f"",
 * rf'', Fr"""). */
static int py_fprefix(const char *s, size_t i) {
  int f = 0;
  size_t k = i;
  while (k > 0 && i - k < 2 && s[k - 1] && strchr("fFrRbBuU", s[k - 1])) {
    f |= s[k - 1] == 'f' || s[k - 1] == 'F';
    k--;
  }
  return f && (k == 0 || !ident_char((unsigned char)s[k - 1]));
}

/* The replacement fields of the f-string whose text is s[a..b): their
 * expressions ({x}, {x!r}, {x:>{w}}, {x=}) copied back into d as code,
 * with the string literals inside them and a debug '=' blanked; "{{" is
 * text. */
static void py_fields(const char *s, char *d, size_t a, size_t b) {
  for (size_t i = a; i < b; i++) {
    if (s[i] != '{')
      continue;
    if (i + 1 < b && s[i + 1] == '{') {
      i++;
      continue;
    }
    size_t j = i + 1;
    int depth = 0;
    for (; j < b; j++) {
      char ch = s[j];
      if (ch == '\'' || ch == '"') { /* a string inside: the other quote */
        size_t q = j + 1;
        while (q < b && s[q] != ch && s[q] != '\n')
          q++;
        j = q < b ? q : b - 1;
      } else if (ch == '(' || ch == '[' || ch == '{') {
        depth++;
      } else if (depth > 0 && (ch == ')' || ch == ']' || ch == '}')) {
        depth--;
      } else if (depth == 0 &&
                 (ch == '}' || ch == ':' ||
                  (ch == '!' && (j + 1 >= b || s[j + 1] != '=')))) {
        break;
      }
    }
    for (size_t k = i + 1; k < j; k++) { /* the expression, as code */
      char ch = s[k];
      d[k] = ch;
      if (ch == '\'' || ch == '"') {
        size_t q = k + 1;
        while (q < j && s[q] != ch && s[q] != '\n')
          q++;
        blank(d, k + 1, q);
        if (q < j)
          d[q] = ch;
        k = q;
      }
    }
    size_t e = j; /* {x=}: a debug specifier, not an assignment */
    while (e > i + 1 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
      e--;
    if (e > i + 2 && s[e - 1] == '=' && !strchr("=!<>", s[e - 2]))
      d[e - 1] = ' ';
    i = j; /* a format spec's own {fields} follow */
  }
}

static void lex_python(const char *s, size_t n, char *d) {
  size_t i = 0;
  while (i < n) {
    char ch = s[i];
    if (ch == '#') {
      size_t j = i;
      while (j < n && s[j] != '\n')
        j++;
      blank(d, i, j);
      i = j;
    } else if (ch == '"' || ch == '\'') {
      if (i + 2 < n && s[i + 1] == ch && s[i + 2] == ch) {
        size_t j = i + 3;
        while (j + 2 < n && !(s[j] == ch && s[j + 1] == ch && s[j + 2] == ch)) {
          if (s[j] == '\\')
            j++;
          j++;
        }
        size_t e = j + 2 < n ? j : n;
        blank(d, i + 3, e);
        if (py_fprefix(s, i))
          py_fields(s, d, i + 3, e);
        i = j + 2 < n ? j + 3 : n;
      } else {
        size_t j = blank_quoted(s, n, i, ch, 0, d);
        if (j > i + 1 && py_fprefix(s, i))
          py_fields(s, d, i + 1, s[j - 1] == ch ? j - 1 : j);
        i = j;
      }
    } else {
      i++;
    }
  }
}

/* A C# string literal whose first quote is s[i]: raw ("""...""", as many
 * quotes closing as opening, any $ prefix), verbatim (@"...", $@"...",
 * @$"...": no escapes, "" is a quote, newlines allowed) or regular and
 * interpolated ("...", $"...": backslash escapes, one line; an
 * interpolation's {expression} is blanked as string text). Blanks the
 * contents in d; returns the end (exclusive). */
static size_t cs_string_end(const char *s, size_t n, size_t i, char *d) {
  size_t q = 0;
  while (i + q < n && s[i + q] == '"')
    q++;
  if (q >= 3) {
    size_t j = i + q;
    for (; j < n; j++) {
      if (s[j] != '"')
        continue;
      size_t r = 0;
      while (j + r < n && s[j + r] == '"')
        r++;
      if (r >= q) {
        blank(d, i + q, j);
        return j + r;
      }
      j += r - 1;
    }
    blank(d, i + q, n);
    return n;
  }
  int verbatim = i > 0 && (s[i - 1] == '@' ||
                           (s[i - 1] == '$' && i > 1 && s[i - 2] == '@'));
  if (!verbatim) {
    return blank_quoted(s, n, i, '"', 0, d);
  }
  size_t j = i + 1;
  while (j < n) {
    if (s[j] == '"') {
      if (j + 1 < n && s[j + 1] == '"') {
        j += 2;
        continue;
      }
      blank(d, i + 1, j);
      return j + 1;
    }
    j++;
  }
  blank(d, i + 1, n);
  return n;
}

/* A Swift string literal whose first quote is s[i], after any number of
 * '#' (raw: "#"..."#", escapes need as many '#'): single-line "..." or
 * multi-line """...""", closed by the same quotes followed by as many
 * '#'; an interpolation's \(expression) is blanked as string text.
 * Blanks the contents in d; returns the end (exclusive). */
static size_t swift_string_end(const char *s, size_t n, size_t i, char *d) {
  size_t h = 0;
  while (h < i && s[i - 1 - h] == '#')
    h++;
  int multi = i + 2 < n && s[i + 1] == '"' && s[i + 2] == '"';
  size_t q = multi ? 3 : 1;
  size_t j = i + q;
  while (j < n) {
    if (s[j] == '\\' && h == 0 && j + 1 < n) {
      j += 2;
      continue;
    }
    if (s[j] == '\n' && !multi)
      break;
    if (s[j] == '"' && (!multi || (j + 2 < n && s[j + 1] == '"' &&
                                   s[j + 2] == '"'))) {
      size_t k = j + q, m = 0;
      while (m < h && k + m < n && s[k + m] == '#')
        m++;
      if (m == h) {
        blank(d, i + q, j);
        return k + h;
      }
    }
    j++;
  }
  blank(d, i + q < n ? i + q : n, j);
  return j;
}

/* A JS/TS template literal whose backquote is s[i]: its text blanked, its
 * ${expressions} left as code (their strings blanked, templates inside
 * them read the same way, up to 32 deep; the "${" and "}" blanked).
 * Returns the end, past the closing backquote. */
static size_t js_template(const char *s, size_t n, size_t i, char *d,
                          int level) {
  size_t j = i + 1;
  for (;;) {
    size_t a = j;
    while (j < n && s[j] != '`' &&
           !(s[j] == '$' && j + 1 < n && s[j + 1] == '{' && level < 32)) {
      if (s[j] == '\\' && j + 1 < n)
        j++;
      j++;
    }
    blank(d, a, j < n ? j : n);
    if (j >= n)
      return n;
    if (s[j] == '`')
      return j + 1;
    blank(d, j, j + 2); /* ${ */
    int depth = 0;
    for (j += 2; j < n;) {
      char ch = s[j];
      if (ch == '`') {
        j = js_template(s, n, j, d, level + 1);
      } else if (ch == '"' || ch == '\'') {
        j = blank_quoted(s, n, j, ch, 0, d);
      } else if (ch == '}' && depth == 0) {
        break;
      } else {
        depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
        j++;
      }
    }
    if (j >= n)
      return n;
    d[j++] = ' '; /* } */
  }
}

/* A regex literal /.../ opened at s[i] (JS, Ruby): blanks its body and
 * returns its end; one not closed on its line is no regex after all
 * (returns i + 1). */
static size_t regex_end(const char *s, size_t n, size_t i, char *d) {
  size_t j = i + 1;
  int in_class = 0;
  while (j < n && s[j] != '\n') {
    if (s[j] == '\\' && j + 1 < n) {
      j += 2;
      continue;
    }
    if (s[j] == '[')
      in_class = 1;
    else if (s[j] == ']')
      in_class = 0;
    else if (s[j] == '/' && !in_class)
      break;
    j++;
  }
  if (j < n && s[j] == '/') {
    blank(d, i + 1, j);
    return j + 1;
  }
  return i + 1;
}

static void lex_clike(const char *s, size_t n, char *d, ck_lang lang) {
  /* Bytes that may open a comment or literal; the rest are skipped fast. */
  unsigned char opens[256] = {0};
  opens['/'] = opens['"'] = opens['\''] = 1;
  if (lang == CK_LANG_GO || lang == CK_LANG_JS || lang == CK_LANG_TS)
    opens['`'] = 1;
  if (lang == CK_LANG_RUST)
    opens['r'] = opens['b'] = 1;
  size_t i = 0;
  while (i < n) {
    if (!opens[(unsigned char)s[i]]) {
      i++;
      continue;
    }
    char ch = s[i];
    char nx = i + 1 < n ? s[i + 1] : 0;
    if (ch == '/' && nx == '/') {
      size_t j = i;
      while (j < n && s[j] != '\n')
        j++;
      blank(d, i, j);
      i = j;
    } else if (ch == '/' && nx == '*') {
      size_t j = i + 2;
      int depth = 1;
      while (j < n && depth > 0) {
        if (s[j] == '*' && j + 1 < n && s[j + 1] == '/') {
          depth--;
          j += 2;
        } else if ((lang == CK_LANG_RUST || lang == CK_LANG_KOTLIN ||
                    lang == CK_LANG_SWIFT) &&
                   s[j] == '/' && j + 1 < n && s[j + 1] == '*') {
          depth++;
          j += 2;
        } else {
          j++;
        }
      }
      blank(d, i, j);
      i = j;
    } else if (ch == '"') {
      /* Raw strings: C++ R"d(...)d", Rust r"..." / r#"..."# / br"...". */
      if (lang == CK_LANG_CPP && i > 0 && s[i - 1] == 'R' &&
          (i < 2 || !ident_char((unsigned char)s[i - 2]) || s[i - 2] == 'u' ||
           s[i - 2] == 'U' || s[i - 2] == 'L' || s[i - 2] == '8')) {
        size_t k = i + 1;
        while (k < n && k - i <= 17 && s[k] != '(')
          k++;
        if (k < n && s[k] == '(') {
          char delim[20];
          size_t dl = k - i - 1;
          memcpy(delim + 1, s + i + 1, dl);
          delim[0] = ')';
          delim[dl + 1] = '"';
          size_t j = k + 1;
          while (j + dl + 2 <= n && memcmp(s + j, delim, dl + 2) != 0)
            j++;
          size_t end = j + dl + 2 <= n ? j + dl + 2 : n;
          blank(d, i + 1, end > i + 1 ? end - 1 : i + 1);
          i = end;
          continue;
        }
      }
      if (lang == CK_LANG_CSHARP) {
        i = cs_string_end(s, n, i, d);
        continue;
      }
      if (lang == CK_LANG_SWIFT) {
        i = swift_string_end(s, n, i, d);
        continue;
      }
      if (lang == CK_LANG_KOTLIN && i + 2 < n && nx == '"' && s[i + 2] == '"') {
        /* raw string: no escapes, ends at the first """ (quotes after it
         * belong to the string) */
        size_t j = i + 3;
        while (j + 2 < n && !(s[j] == '"' && s[j + 1] == '"' && s[j + 2] == '"'))
          j++;
        if (j + 2 >= n) { /* unterminated: the rest of the text */
          blank(d, i + 3 < n ? i + 3 : n, n);
          i = n;
          continue;
        }
        size_t end = j + 3;
        while (end < n && s[end] == '"')
          end++;
        blank(d, i + 3, end - 3);
        i = end;
        continue;
      }
      i = blank_quoted(s, n, i, '"', lang == CK_LANG_RUST, d);
    } else if (lang == CK_LANG_RUST && (ch == 'r' || ch == 'b') &&
               (i == 0 || !ident_char((unsigned char)s[i - 1])) &&
               (nx == '#' || nx == '"' ||
                (ch == 'b' && nx == 'r' && i + 2 < n &&
                 (s[i + 2] == '"' || s[i + 2] == '#')))) {
      size_t k = i + (ch == 'b' && nx == 'r' ? 2 : 1);
      if (ch == 'b' && nx == '"') {
        i++;
        continue; /* b"..." is an ordinary string from the quote on */
      }
      size_t hashes = 0;
      while (k < n && s[k] == '#') {
        hashes++;
        k++;
      }
      if (k >= n || s[k] != '"') {
        i++;
        continue;
      }
      size_t j = k + 1;
      for (; j < n; j++) {
        if (s[j] != '"')
          continue;
        size_t h = 0;
        while (h < hashes && j + 1 + h < n && s[j + 1 + h] == '#')
          h++;
        if (h == hashes)
          break;
      }
      size_t end = j < n ? j + 1 + hashes : n;
      blank(d, k + 1, j < n ? j : n);
      i = end;
    } else if (ch == '\'') {
      if (lang == CK_LANG_RUST) {
        /* 'x', '\n', '\u{..}' are chars; 'a (no closing quote right after
         * one character) is a lifetime or label. */
        size_t j;
        if (nx == '\\') {
          j = quoted_end(s, n, i, '\'', 0);
        } else {
          size_t k = i + 1;
          if (k < n)
            k++;
          while (k < n && ((unsigned char)s[k] & 0xC0) == 0x80)
            k++;
          j = (k < n && s[k] == '\'') ? k + 1 : i + 1;
        }
        if (j > i + 2)
          blank(d, i + 1, j - 1);
        i = j;
      } else {
        i = blank_quoted(s, n, i, '\'', 0, d);
      }
    } else if (ch == '`' && (lang == CK_LANG_JS || lang == CK_LANG_TS)) {
      i = js_template(s, n, i, d, 0);
    } else if (ch == '`' && lang == CK_LANG_GO) {
      size_t j = i + 1;
      while (j < n && s[j] != '`')
        j++;
      blank(d, i + 1, j < n ? j : n);
      i = j < n ? j + 1 : n;
    } else if (ch == '/' && (lang == CK_LANG_JS || lang == CK_LANG_TS) &&
               strchr("(,=:[!&|?{};+-*%<>~^", prev_sig(d, i)) != NULL) {
      /* (prev_sig 0 matches the terminating NUL: start of text) */
      i = regex_end(s, n, i, d);
    } else {
      i++;
    }
  }
}

/* The offset of the heredoc label lab[0..len) on the first line from
 * `ls` whose text, after leading blanks, is that label: followed by a
 * byte that cannot continue a name (PHP's "EOT;"), or with `whole` by
 * nothing but blanks (Ruby). n when no line closes it. */
static size_t label_line(const char *s, size_t n, size_t ls, const char *lab,
                         size_t len, int whole) {
  while (ls < n) {
    size_t j = ls;
    while (j < n && (s[j] == ' ' || s[j] == '\t'))
      j++;
    const char *nl = memchr(s + ls, '\n', n - ls);
    size_t le = nl ? (size_t)(nl - s) : n;
    if (j + len <= le && memcmp(s + j, lab, len) == 0) {
      size_t k = j + len;
      if (!whole && (k == n || !ident_char((unsigned char)s[k])))
        return j;
      while (whole && k < le &&
             (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
        k++;
      if (whole && k == le)
        return j;
    }
    ls = nl ? le + 1 : n;
  }
  return n;
}

/* PHP: a heredoc or nowdoc opened by the "<<<" at s[i] ("<<<ID",
 * "<<<\"ID\"", "<<<'ID'", then a newline), closed by a line whose first
 * non-blank text is ID not followed by an identifier byte. Blanks its
 * labels and body in d; returns the end of the closing ID, or i + 3 when
 * s[i] opens none (the "<<<" is then an operator's text). */
static size_t php_heredoc_end(const char *s, size_t n, size_t i, char *d) {
  size_t k = i + 3;
  while (k < n && (s[k] == ' ' || s[k] == '\t'))
    k++;
  char q = k < n && (s[k] == '"' || s[k] == '\'') ? s[k++] : 0;
  size_t id = k;
  while (k < n && ident_char((unsigned char)s[k]) && s[k] != '$')
    k++;
  size_t idn = k - id;
  if (idn == 0 || (q && (k >= n || s[k++] != q)))
    return i + 3;
  while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
    k++;
  if (k >= n || s[k] != '\n')
    return i + 3;
  size_t j = label_line(s, n, k + 1, s + id, idn, 0);
  size_t e = j < n ? j + idn : n; /* unterminated: the rest of the file */
  blank(d, i + 3, e);
  return e;
}

/* PHP: outside <?php ... ?> (or <?= ... ?>) is inline text, blanked with
 * the tags; inside, C-like comments and # comments (a "?>" ends a line
 * comment and the code), '...' and "..." over any number of lines (a
 * "{$x}" inside "..." is string text), heredoc and nowdoc. */
static void lex_php(const char *s, size_t n, char *d) {
  size_t i = 0;
  for (;;) {
    /* inline text up to the next open tag */
    size_t t = i;
    const char *o = NULL;
    while (t + 1 < n && (o = memchr(s + t, '<', n - t - 1)) != NULL) {
      t = (size_t)(o - s);
      if (s[t + 1] == '?')
        break;
      t++;
      o = NULL;
    }
    if (!o) {
      blank(d, i, n);
      return;
    }
    size_t code = t + 2;
    if (code + 3 <= n && strncasecmp(s + code, "php", 3) == 0)
      code += 3;
    else if (code < n && s[code] == '=')
      code++;
    blank(d, i, code);
    i = code;
    /* code up to "?>" outside comments and strings */
    while (i < n) {
      char ch = s[i];
      char nx = i + 1 < n ? s[i + 1] : 0;
      if (ch == '?' && nx == '>') {
        blank(d, i, i + 2);
        i += 2;
        break;
      }
      if ((ch == '/' && nx == '/') || (ch == '#' && nx != '[')) {
        size_t j = i;
        while (j < n && s[j] != '\n' && !(s[j] == '?' && j + 1 < n &&
                                           s[j + 1] == '>'))
          j++;
        blank(d, i, j);
        i = j;
      } else if (ch == '/' && nx == '*') {
        const char *e = i + 2 < n ? memmem(s + i + 2, n - i - 2, "*/", 2)
                                  : NULL;
        size_t j = e ? (size_t)(e - s) + 2 : n;
        blank(d, i, j);
        i = j;
      } else if (ch == '"' || ch == '\'') {
        i = blank_quoted(s, n, i, ch, 1, d);
      } else if (ch == '<' && nx == '<' && i + 2 < n && s[i + 2] == '<') {
        i = php_heredoc_end(s, n, i, d);
      } else {
        i++;
      }
    }
    if (i >= n)
      return;
  }
}

/* Ruby: the closing delimiter of a %-literal opened by o ("%w[", "%q(",
 * "%{"): brackets pair and nest, any other byte closes itself. */
static char rb_close(char o) {
  return o == '(' ? ')' : o == '[' ? ']' : o == '{' ? '}' : o == '<' ? '>' : o;
}

/* Ruby: # comments, =begin/=end blocks, '...' and "..." over any number of
 * lines (a "#{...}" inside is string text), %w[] %q() %Q{} %i[] %r{}
 * literals, heredocs (<<~ID, <<-ID, <<ID with an upper-case ID, quoted or
 * not: the body from the next line to the line holding only ID), regex
 * literals /.../ after an operator, ?x character literals, and the
 * globals $` $' $" (no string opens there). */
static void lex_ruby(const char *s, size_t n, char *d) {
  size_t i = 0;
  size_t hd_from = 0; /* a heredoc body starts at the next line */
  char hd_id[64];
  size_t hd_len = 0;
  while (i < n) {
    char ch = s[i];
    char nx = i + 1 < n ? s[i + 1] : 0;
    int bol = i == 0 || s[i - 1] == '\n';
    if (ch == '\n' && hd_len) { /* the pending heredoc's body, through
                                   its closing line (or the text's end) */
      size_t j = label_line(s, n, i + 1, hd_id, hd_len, 1);
      const char *nl = j < n ? memchr(s + j, '\n', n - j) : NULL;
      size_t le = nl ? (size_t)(nl - s) : n;
      blank(d, hd_from, le);
      hd_len = 0;
      i = le;
      continue;
    }
    if (bol && ch == '=' && i + 6 <= n && memcmp(s + i, "=begin", 6) == 0) {
      const char *e = memmem(s + i, n - i, "\n=end", 5);
      size_t j = e ? (size_t)(e - s) + 5 : n;
      while (j < n && s[j] != '\n')
        j++;
      blank(d, i, j);
      i = j;
    } else if (ch == '#') {
      size_t j = i;
      while (j < n && s[j] != '\n')
        j++;
      blank(d, i, j);
      i = j;
    } else if ((ch == '"' || ch == '\'' || ch == '`') && i > 0 &&
               (s[i - 1] == '$' ||
                (s[i - 1] == '?' &&
                 (i < 2 || !ident_char((unsigned char)s[i - 2]))))) {
      blank(d, i, i + 1); /* $` $' $" (globals), ?" (a character) */
      i++;
    } else if (ch == '"' || ch == '\'' || ch == '`') {
      i = blank_quoted(s, n, i, ch, 1, d);
    } else if (ch == '%' && nx && strchr("wWqQiIr", nx) && i + 2 < n &&
               strchr("([{<|!/", s[i + 2])) {
      char o = s[i + 2], c = rb_close(o);
      size_t j = i + 3;
      int depth = 1;
      while (j < n) {
        if (s[j] == '\\' && j + 1 < n) {
          j += 2;
          continue;
        }
        if (s[j] == c && --depth == 0)
          break;
        if (s[j] == o && o != c)
          depth++;
        j++;
      }
      blank(d, i + 1, i + 2); /* the type letter is no name either */
      blank(d, i + 3, j < n ? j : n);
      i = j < n ? j + 1 : n;
    } else if (ch == '<' && nx == '<' && i + 2 < n &&
               (s[i + 2] == '~' || s[i + 2] == '-' || s[i + 2] == '\'' ||
                s[i + 2] == '"' || (s[i + 2] >= 'A' && s[i + 2] <= 'Z'))) {
      size_t k = i + 2;
      if (s[k] == '~' || s[k] == '-')
        k++;
      char q = k < n && (s[k] == '\'' || s[k] == '"') ? s[k++] : 0;
      size_t id = k;
      while (k < n && ((s[k] >= 'A' && s[k] <= 'Z') || s[k] == '_' ||
                       (s[k] >= '0' && s[k] <= '9')))
        k++;
      if (k > id && k - id < sizeof hd_id && (!q || (k < n && s[k] == q)) &&
          !hd_len) {
        hd_len = k - id;
        memcpy(hd_id, s + id, hd_len);
        const char *nl = memchr(s + k, '\n', n - k);
        hd_from = nl ? (size_t)(nl - s) + 1 : n;
        blank(d, id, k);
        i = q ? k + 1 : k;
      } else {
        i += 2;
      }
    } else if (ch == '/' && strchr("(,=!&|?{};[~", prev_sig(d, i)) != NULL) {
      i = regex_end(s, n, i, d);
    } else if (ch == '?' && nx && nx != ' ' && nx != '\n' &&
               (i + 2 >= n || !ident_char((unsigned char)s[i + 2])) &&
               (i == 0 || !ident_char((unsigned char)s[i - 1])) &&
               prev_sig(d, i) != ')') {
      blank(d, i + 1, i + 2); /* ?x */
      i += 2;
    } else {
      i++;
    }
  }
}

/* Blanks preprocessor directives of the (already comment-blanked) copy d:
 * a line whose first non-blank byte is '#', with backslash continuations. */
static void blank_directives(char *d, size_t n) {
  size_t i = 0;
  while (i < n) {
    size_t ls = i;
    while (i < n && (d[i] == ' ' || d[i] == '\t'))
      i++;
    if (i < n && d[i] == '#') {
      size_t j = i;
      for (;;) {
        while (j < n && d[j] != '\n')
          j++;
        size_t k = j;
        while (k > ls &&
               (d[k - 1] == ' ' || d[k - 1] == '\t' || d[k - 1] == '\r'))
          k--;
        if (j < n && k > ls && d[k - 1] == '\\') {
          j++;
          continue;
        }
        break;
      }
      blank(d, ls, j);
      i = j;
    }
    while (i < n && d[i] != '\n')
      i++;
    if (i < n)
      i++;
  }
}

char *ck_lex_blank(const char *src, size_t n, ck_lang lang, char **directives) {
  if (directives)
    *directives = NULL;
  char *d = malloc(n + 1);
  if (!d)
    return NULL;
  memcpy(d, src, n);
  d[n] = '\0';
  if (lang == CK_LANG_PYTHON)
    lex_python(src, n, d);
  else if (lang == CK_LANG_PHP)
    lex_php(src, n, d);
  else if (lang == CK_LANG_RUBY)
    lex_ruby(src, n, d);
  else
    lex_clike(src, n, d, lang);
  if (directives &&
      (lang == CK_LANG_C || lang == CK_LANG_CPP || lang == CK_LANG_CSHARP)) {
    char *v = malloc(n + 1);
    if (!v) {
      free(d);
      return NULL;
    }
    memcpy(v, d, n + 1);
    blank_directives(v, n);
    *directives = v;
  }
  return d;
}
