// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * json-get.c - test helper: parse JSON from stdin with json-c and print
 * the value at each PATH ("classes.0.name"; numbers index arrays):
 * strings raw, other values as JSON, a missing one as "(missing)".
 * With --lines, every input line is a document of its own (JSON Lines)
 * and PATH is looked up in each.  Exit 1 when a document does not parse.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

static void print_path(struct json_object *o, const char *path)
{
	char *copy = strdup(path), *save = NULL;
	bool found = true;

	for (char *k = strtok_r(copy, ".", &save); k && found; k = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array)) {
			char *end;
			long i = strtol(k, &end, 10);

			found = !*end && i >= 0 && (size_t)i < json_object_array_length(o);
			o = found ? json_object_array_get_idx(o, (size_t)i) : NULL;
		} else {
			found = json_object_is_type(o, json_type_object) &&
				json_object_object_get_ex(o, k, &o);
		}
	}
	free(copy);
	if (!found)
		puts("(missing)");
	else if (json_object_is_type(o, json_type_string))
		puts(json_object_get_string(o));
	else
		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

static int one(const char *text, int argc, char **argv)
{
	enum json_tokener_error err;
	struct json_object *o = json_tokener_parse_verbose(text, &err);

	if (!o) {
		fprintf(stderr, "json-get: %s\n", json_tokener_error_desc(err));
		return 1;
	}
	for (int i = 0; i < argc; i++)
		print_path(o, argv[i]);
	json_object_put(o);
	return 0;
}

int main(int argc, char **argv)
{
	bool lines = argc > 1 && !strcmp(argv[1], "--lines");
	char *buf = NULL;
	size_t cap = 0, len = 0;
	ssize_t n;
	int r = 0;

	if (lines) {
		while ((n = getline(&buf, &cap, stdin)) > 0)
			r |= one(buf, argc - 2, argv + 2);
		free(buf);
		return r;
	}
	buf = malloc(cap = 65536);
	while (buf && (n = (ssize_t)fread(buf + len, 1, cap - len - 1, stdin)) > 0) {
		len += (size_t)n;
		if (cap - len < 2)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf)
		return 1;
	buf[len] = '\0';
	r = one(buf, argc - 1, argv + 1);
	free(buf);
	return r;
}
