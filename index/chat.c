/*
 * chat.c - chat sessions, their turns and rolling summaries, stored in the
 * index database so a conversation survives restarts. This file stores and
 * lists; deciding when to summarise and what goes into the prompt belongs to
 * pipeline/. Each call is its own (auto-committed) transaction.
 */
#include "index_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static dq_status step_done(dq_index *idx, sqlite3_stmt *st, const char *what) {
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? DQ_OK : dq__db_err(idx, rc, what);
}

dq_status dq_index_session_open(dq_index *idx, const char *name, int create,
                                int64_t *session_id) {
  sqlite3_stmt *st = NULL;
  *session_id = 0;
  if (!name || !*name)
    return dq_error_set(&idx->err, DQ_ERR_ARG, "session name missing");
  dq_status s =
      dq__prepare(idx, "SELECT id FROM sessions WHERE name = ?1", &st);
  if (s)
    return s;
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *session_id = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (rc == SQLITE_ROW)
    return DQ_OK;
  if (rc != SQLITE_DONE)
    return dq__db_err(idx, rc, "looking up a session");
  if (!create)
    return dq_error_set(&idx->err, DQ_ERR_NOTFOUND, "no chat session '%s'",
                        name);
  if ((s = dq__check_writable(idx)))
    return s;
  if ((s = dq__prepare(idx,
                       "INSERT INTO sessions(name, created) VALUES (?1, ?2)",
                       &st)))
    return s;
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, (int64_t)time(NULL));
  if ((s = step_done(idx, st, "creating a session")))
    return s;
  *session_id = sqlite3_last_insert_rowid(idx->db);
  return DQ_OK;
}

dq_status dq_index_session_delete(dq_index *idx, const char *name) {
  sqlite3_stmt *st = NULL;
  dq_status s = dq__check_writable(idx);
  if (s || (s = dq__prepare(idx, "DELETE FROM sessions WHERE name = ?1", &st)))
    return s;
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  if ((s = step_done(idx, st, "deleting a session")))
    return s;
  if (!sqlite3_changes(idx->db))
    return dq_error_set(&idx->err, DQ_ERR_NOTFOUND, "no chat session '%s'",
                        name);
  return DQ_OK;
}

dq_status dq_index_turn_add(dq_index *idx, int64_t session, const char *role,
                            const char *text, int32_t tokens,
                            int64_t *turn_id) {
  sqlite3_stmt *st = NULL;
  dq_status s = dq__check_writable(idx);
  if (s)
    return s;
  if (!role || !text)
    return dq_error_set(&idx->err, DQ_ERR_ARG, "turn needs role and text");
  if ((s = dq__prepare(idx,
                       "INSERT INTO turns(session, role, text, tokens, created)"
                       " VALUES (?1, ?2, ?3, ?4, ?5)",
                       &st)))
    return s;
  sqlite3_bind_int64(st, 1, session);
  sqlite3_bind_text(st, 2, role, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 4, tokens);
  sqlite3_bind_int64(st, 5, (int64_t)time(NULL));
  if ((s = step_done(idx, st, "adding a turn")))
    return s; /* unknown session: FOREIGN KEY constraint failed */
  if (turn_id)
    *turn_id = sqlite3_last_insert_rowid(idx->db);
  return DQ_OK;
}

void dq_turns_free(dq_turn *t, size_t n) {
  if (!t)
    return;
  for (size_t i = 0; i < n; i++) {
    free(t[i].role);
    free(t[i].text);
  }
  free(t);
}

dq_status dq_index_turns_list(dq_index *idx, int64_t session,
                              int64_t after_id, dq_turn **out, size_t *n_out) {
  sqlite3_stmt *st = NULL;
  dq_turn *v = NULL;
  size_t n = 0, cap = 0;
  *out = NULL;
  *n_out = 0;
  dq_status s = dq__prepare(idx,
                            "SELECT id, role, text, tokens, created FROM turns"
                            " WHERE session = ?1 AND id > ?2 ORDER BY id",
                            &st);
  if (s)
    return s;
  sqlite3_bind_int64(st, 1, session);
  sqlite3_bind_int64(st, 2, after_id);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (n == cap) {
      size_t c = cap ? cap * 2 : 16;
      dq_turn *p = realloc(v, c * sizeof *p);
      if (!p)
        goto nomem;
      v = p;
      cap = c;
    }
    dq_turn *t = &v[n++];
    memset(t, 0, sizeof *t);
    t->id = sqlite3_column_int64(st, 0);
    t->role = strdup((const char *)sqlite3_column_text(st, 1));
    t->text = strdup((const char *)sqlite3_column_text(st, 2));
    t->tokens = sqlite3_column_int(st, 3);
    t->created = sqlite3_column_int64(st, 4);
    if (!t->role || !t->text)
      goto nomem;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    dq_turns_free(v, n);
    return dq__db_err(idx, rc, "listing turns");
  }
  *out = v;
  *n_out = n;
  return DQ_OK;
nomem:
  sqlite3_finalize(st);
  dq_turns_free(v, n);
  return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
}

dq_status dq_index_summary_set(dq_index *idx, int64_t session,
                               int64_t upto_turn, const char *text,
                               int32_t tokens) {
  sqlite3_stmt *st = NULL;
  dq_status s = dq__check_writable(idx);
  if (s)
    return s;
  if (!text)
    return dq_error_set(&idx->err, DQ_ERR_ARG, "summary text missing");
  if ((s = dq__prepare(idx,
                       "INSERT INTO summaries(session, upto_turn, text, tokens,"
                       " created) VALUES (?1, ?2, ?3, ?4, ?5)",
                       &st)))
    return s;
  sqlite3_bind_int64(st, 1, session);
  sqlite3_bind_int64(st, 2, upto_turn);
  sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 4, tokens);
  sqlite3_bind_int64(st, 5, (int64_t)time(NULL));
  return step_done(idx, st, "storing a summary");
}

dq_status dq_index_summary_get(dq_index *idx, int64_t session, char **text,
                               int64_t *upto_turn) {
  sqlite3_stmt *st = NULL;
  *text = NULL;
  dq_status s = dq__prepare(idx,
                            "SELECT text, upto_turn FROM summaries WHERE"
                            " session = ?1 ORDER BY id DESC LIMIT 1",
                            &st);
  if (s)
    return s;
  sqlite3_bind_int64(st, 1, session);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *text = strdup((const char *)sqlite3_column_text(st, 0));
    if (upto_turn)
      *upto_turn = sqlite3_column_int64(st, 1);
    if (!*text)
      s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  } else if (rc == SQLITE_DONE) {
    s = dq_error_set(&idx->err, DQ_ERR_NOTFOUND,
                     "session %lld has no summary", (long long)session);
  } else {
    s = dq__db_err(idx, rc, "reading a summary");
  }
  sqlite3_finalize(st);
  return s;
}
