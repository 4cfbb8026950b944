/*
 * xml_names.h - element and attribute lookup by local name (any namespace,
 * so a DOCX's transitional and strict namespaces, and an ODT's, all match),
 * shared by read_docx.c and read_odt.c. Returned strings point into the
 * libxml2 tree and live as long as it does.
 */
#ifndef DQ_XML_NAMES_H
#define DQ_XML_NAMES_H

#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

/* Whether n is an element with local name `local`. */
static inline int is(xmlNodePtr n, const char *local) {
  return n && n->type == XML_ELEMENT_NODE &&
         strcmp((const char *)n->name, local) == 0;
}

/* The value of n's attribute with local name `local`, or NULL. */
static inline const char *attr(xmlNodePtr n, const char *local) {
  for (xmlAttrPtr a = n ? n->properties : NULL; a; a = a->next)
    if (strcmp((const char *)a->name, local) == 0 && a->children &&
        a->children->type == XML_TEXT_NODE)
      return (const char *)a->children->content;
  return NULL;
}

/* The same as an integer within +-1,000,000, else dflt. */
static inline int attr_int(xmlNodePtr n, const char *local, int dflt) {
  const char *v = attr(n, local);
  if (!v)
    return dflt;
  char *end;
  long x = strtol(v, &end, 10);
  return end == v || x < -1000000 || x > 1000000 ? dflt : (int)x;
}

/* n's first child element with local name `local`, or NULL. */
static inline xmlNodePtr child(xmlNodePtr n, const char *local) {
  for (xmlNodePtr k = n ? n->children : NULL; k; k = k->next)
    if (is(k, local))
      return k;
  return NULL;
}

#endif
