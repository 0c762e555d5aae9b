// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-print.c - the tree printers and device info on a small tree built
 * in-process: exact text, JSON parsed back with json-c, DOT rendered by
 * Graphviz when `dot` is installed, both layouts, bad arguments.
 */
#include <json-c/json.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "classfs/print.h"

static const struct classfs_device_type disk_type = { .name = "disk" };
static const struct classfs_device_type part_type = { .name = "partition" };

struct sample {
	struct classfs_tree *t;
	struct classfs_bus pci;
	struct classfs_device host, ahci;	/* physical: pci0000:00 -> 0000:00:1f.2 */
	struct classfs_class *block, *input, *nvme;
	struct classfs_device *sda, *sda1, *input0, *event0, *nvme0, *ns;
};

static struct classfs_device *mk(struct classfs_class *cls, struct classfs_device *parent,
				 dev_t devt, struct classfs_device *phys,
				 const struct classfs_device_type *type, const char *name)
{
	struct classfs_device *d = classfs_zalloc(sizeof(*d));

	classfs_device_initialize(d);
	d->cls = cls;
	d->parent = parent;
	d->devt = devt;
	d->phys = phys;
	d->type = type;
	d->release = (void (*)(struct classfs_device *))classfs_free;
	CHECK_INT(classfs_device_set_name(d, "%s", name), 0);
	CHECK_INT(classfs_device_add(d), 0);
	return d;
}

static void sample_build(struct sample *s, enum classfs_layout layout)
{
	*s = (struct sample){ .pci = { .name = "pci" } };
	s->t = classfs_tree_new(layout);
	CHECK_INT(classfs_bus_register(s->t, &s->pci), 0);
	classfs_device_initialize(&s->host);
	CHECK_INT(classfs_device_set_name(&s->host, "pci0000:00"), 0);
	CHECK_INT(classfs_device_add_to(s->t, &s->host), 0);
	classfs_device_initialize(&s->ahci);
	CHECK_INT(classfs_device_set_name(&s->ahci, "0000:00:1f.2"), 0);
	s->ahci.parent = &s->host;
	s->ahci.bus = &s->pci;
	CHECK_INT(classfs_device_add(&s->ahci), 0);
	/* registered in an order that is not sorted: the printers sort */
	s->input = classfs_class_create(s->t, "input");
	s->block = classfs_class_create(s->t, "block");
	s->nvme = classfs_class_create(s->t, "nvme");
	s->sda = mk(s->block, NULL, makedev(8, 0), &s->ahci, &disk_type, "sda");
	s->sda1 = mk(s->block, s->sda, makedev(8, 1), NULL, &part_type, "sda1");
	s->input0 = mk(s->input, NULL, 0, NULL, NULL, "input0");
	s->event0 = mk(s->input, s->input0, makedev(13, 64), NULL, NULL, "event0");
	s->nvme0 = mk(s->nvme, NULL, makedev(241, 0), NULL, NULL, "nvme0");
	s->ns = mk(s->block, NULL, makedev(259, 0), s->nvme0, &disk_type, "nvme0n1");
}

static void sample_free(struct sample *s)
{
	classfs_class_destroy(s->block);
	classfs_class_destroy(s->input);
	classfs_class_destroy(s->nvme);
	CHECK_INT(classfs_device_unregister(&s->ahci), 0);
	CHECK_INT(classfs_device_unregister(&s->host), 0);
	CHECK_INT(classfs_bus_unregister(&s->pci), 0);
	CHECK_INT(classfs_tree_free(s->t), 0);
}

/* what a printer wrote, as a string to free; its return in *r */
static char *capture_tree(struct classfs_tree *t, enum classfs_print_format fmt, int *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*r = classfs_tree_print(t, fmt, f);
	fclose(f);
	return buf;
}

static char *capture_info(struct classfs_device *dev, enum classfs_print_format fmt, int *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*r = classfs_device_print_info(dev, fmt, f);
	fclose(f);
	return buf;
}

static const char text_class[] =
	"class block\n"
	"  nvme0n1 [259:0] (disk) -> /class/nvme/nvme0\n"
	"  sda [8:0] (disk) -> /devices/pci0000:00/0000:00:1f.2\n"
	"    sda1 [8:1] (partition)\n"
	"class input\n"
	"  input0\n"
	"    event0 [13:64]\n"
	"class nvme\n"
	"  nvme0 [241:0]\n"
	"/devices\n"
	"  pci0000:00\n"
	"    0000:00:1f.2 (bus pci)\n";

/* the devices layout: same outline, DEVPATHs of that layout */
static const char text_devices[] =
	"class block\n"
	"  nvme0n1 [259:0] (disk) -> /devices/virtual/nvme/nvme0\n"
	"  sda [8:0] (disk) -> /devices/pci0000:00/0000:00:1f.2\n"
	"    sda1 [8:1] (partition)\n"
	"class input\n"
	"  input0\n"
	"    event0 [13:64]\n"
	"class nvme\n"
	"  nvme0 [241:0]\n"
	"/devices\n"
	"  pci0000:00\n"
	"    0000:00:1f.2 (bus pci)\n";

TEST(text_exact_both_layouts)
{
	struct sample s;
	char *out;
	int r;

	sample_build(&s, CLASSFS_LAYOUT_CLASS);
	out = capture_tree(s.t, CLASSFS_PRINT_TEXT, &r);
	CHECK_INT(r, 0);
	CHECK_STR(out, text_class);
	free(out);
	/* a device removed is no longer printed; its children went with it */
	classfs_device_unregister(s.sda);
	out = capture_tree(s.t, CLASSFS_PRINT_TEXT, &r);
	CHECK_INT(r, 0);
	CHECK(out && !strstr(out, "sda") && strstr(out, "nvme0n1"));
	free(out);
	sample_free(&s);

	sample_build(&s, CLASSFS_LAYOUT_DEVICES);
	out = capture_tree(s.t, CLASSFS_PRINT_TEXT, &r);
	CHECK_INT(r, 0);
	CHECK_STR(out, text_devices);
	free(out);
	sample_free(&s);

	/* an empty tree prints nothing */
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);

	out = capture_tree(t, CLASSFS_PRINT_TEXT, &r);
	CHECK_INT(r, 0);
	CHECK_STR(out, "");
	free(out);
	CHECK_INT(classfs_tree_free(t), 0);
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static struct json_object *at(struct json_object *a, size_t i)
{
	if (!a || !json_object_is_type(a, json_type_array) || i >= json_object_array_length(a))
		return NULL;
	return json_object_array_get_idx(a, i);
}

TEST(json_parses_back)
{
	struct sample s;
	struct json_object *root, *classes, *block, *sda, *sda1, *phys;
	char *out;
	int r;

	sample_build(&s, CLASSFS_LAYOUT_DEVICES);
	out = capture_tree(s.t, CLASSFS_PRINT_JSON, &r);
	CHECK_INT(r, 0);
	root = json_tokener_parse(out);
	CHECK(root != NULL);
	CHECK_STR(get_str(root, "layout"), "devices");
	CHECK_INT(json_object_get_uint64(get(root, "seqnum")), classfs_tree_seqnum(s.t));
	classes = get(root, "classes");
	CHECK_INT(json_object_array_length(classes), 3);
	block = at(classes, 0);
	CHECK_STR(get_str(block, "name"), "block");
	CHECK_STR(get_str(at(classes, 1), "name"), "input");
	CHECK_STR(get_str(at(classes, 2), "name"), "nvme");
	CHECK_INT(json_object_array_length(get(block, "devices")), 2);
	sda = at(get(block, "devices"), 1);
	CHECK_STR(get_str(sda, "name"), "sda");
	CHECK_STR(get_str(sda, "class"), "block");
	CHECK_STR(get_str(sda, "devpath"), "/devices/pci0000:00/0000:00:1f.2/block/sda");
	CHECK_STR(get_str(sda, "syspath"), "/devices/pci0000:00/0000:00:1f.2/block/sda");
	CHECK_STR(get_str(sda, "dev"), "8:0");
	CHECK_STR(get_str(sda, "devtype"), "disk");
	CHECK_STR(get_str(sda, "device"), "/devices/pci0000:00/0000:00:1f.2");
	CHECK(get(sda, "bus") == NULL);		/* present as null */
	CHECK(json_object_object_get_ex(sda, "bus", NULL));
	sda1 = at(get(sda, "children"), 0);
	CHECK_STR(get_str(sda1, "name"), "sda1");
	CHECK_STR(get_str(sda1, "devtype"), "partition");
	CHECK_INT(json_object_array_length(get(sda1, "children")), 0);
	CHECK_STR(get_str(at(get(at(classes, 1), "devices"), 0), "name"), "input0");
	CHECK(get(at(get(at(classes, 1), "devices"), 0), "dev") == NULL);
	phys = at(get(root, "devices"), 0);
	CHECK_STR(get_str(phys, "name"), "pci0000:00");
	CHECK(get(phys, "class") == NULL);
	CHECK_STR(get_str(at(get(phys, "children"), 0), "bus"), "pci");
	json_object_put(root);
	free(out);
	sample_free(&s);
}

static bool have_dot(void)
{
	return system("command -v dot >/dev/null 2>&1") == 0;
}

/* feed @text to `dot -Tsvg`; its exit status, or -1 */
static int dot_render(const char *text)
{
	FILE *p = popen("dot -Tsvg -o /dev/null", "w");
	int st;

	if (!p)
		return -1;
	fputs(text, p);
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; p && (p = strstr(p, needle)); p++)
		n++;
	return n;
}

TEST(dot_clusters_edges_render)
{
	struct sample s;
	struct classfs_device *odd;
	char *out;
	int r;

	sample_build(&s, CLASSFS_LAYOUT_CLASS);
	/* a name DOT must escape: a quote and a backslash */
	odd = mk(s.input, s.input0, 0, NULL, NULL, "we\"ird\\x");
	out = capture_tree(s.t, CLASSFS_PRINT_DOT, &r);
	CHECK_INT(r, 0);
	CHECK(!strncmp(out, "digraph classfs {\n", 18));
	CHECK_INT(count(out, "subgraph cluster_"), 4);	/* 3 classes + /devices */
	CHECK(strstr(out, "label=\"class block\";") != NULL);
	CHECK(strstr(out, "label=\"sda1\\n8:1 partition\"") != NULL);
	CHECK(strstr(out, "label=\"we\\\"ird\\\\x\"") != NULL);
	/* nesting: sda->sda1, input0->event0, input0->odd, pci0000:00->ahci; dashed: 2 physical */
	CHECK_INT(count(out, " -> "), 6);
	CHECK_INT(count(out, "[style=dashed]"), 2);
	if (have_dot())
		CHECK_INT(dot_render(out), 0);
	else
		printf("# dot not installed: rendering not checked\n");
	free(out);

	out = capture_info(s.sda1, CLASSFS_PRINT_DOT, &r);
	CHECK_INT(r, 0);
	CHECK(strstr(out, "style=bold") != NULL);
	CHECK_INT(count(out, " -> "), 1);
	if (have_dot())
		CHECK_INT(dot_render(out), 0);
	free(out);
	out = capture_info(s.sda, CLASSFS_PRINT_DOT, &r);
	CHECK_INT(r, 0);
	CHECK_INT(count(out, " -> "), 2);		/* sda -> sda1, ahci -> sda */
	CHECK_INT(count(out, "[style=dashed]"), 1);
	if (have_dot())
		CHECK_INT(dot_render(out), 0);
	free(out);
	classfs_device_unregister(odd);
	sample_free(&s);
}

static ssize_t secret_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			    const char *buf, size_t count)
{
	return (ssize_t)count;
}

static const struct classfs_device_attribute secret = {
	.attr = { .name = "secret", .mode = 0200 },
	.store = secret_store,
};

static const char info_sda1[] =
	"name: sda1\n"
	"class: block\n"
	"devpath: /class/block/sda/sda1\n"
	"syspath: /devices/pci0000:00/0000:00:1f.2/block/sda/sda1\n"
	"parent: /class/block/sda\n"
	"physical parent: -\n"
	"devt: 8:1\n"
	"DEVTYPE: partition\n"
	"uevent:\n"
	"  MAJOR=8\n"
	"  MINOR=1\n"
	"  DEVNAME=sda1\n"
	"  DEVTYPE=partition\n"
	"attributes:\n"
	"  dev: 8:1\n"
	"  holders/note: two\n"
	"    lines\n"
	"  secret: (Permission denied)\n"
	"  size: 2048\n"
	"  start: 63\n"
	"links:\n"
	"  subsystem -> ../../../block\n"
	"  whole -> ../../sda\n";

TEST(info_text_and_json)
{
	struct sample s;
	struct json_object *o;
	char *out;
	int r;

	sample_build(&s, CLASSFS_LAYOUT_CLASS);
	CHECK_INT(classfs_device_add_value(s.sda1, "size", 0444, "2048\n", 5, 0), 0);
	CHECK_INT(classfs_device_add_value(s.sda1, "start", 0644, "63\n", 3, 0), 0);
	CHECK_INT(classfs_device_add_value(s.sda1, "holders/note", 0444, "two\nlines\n", 10, 0), 0);
	CHECK_INT(classfs_device_add_link_to(s.sda1, "whole", s.sda), 0);
	CHECK_INT(classfs_device_create_file(s.sda1, &secret), 0);
	out = capture_info(s.sda1, CLASSFS_PRINT_TEXT, &r);
	CHECK_INT(r, 0);
	CHECK_STR(out, info_sda1);
	free(out);

	/* a device with children: they are not its attributes */
	out = capture_info(s.input0, CLASSFS_PRINT_TEXT, &r);
	CHECK_INT(r, 0);
	CHECK(out && !strstr(out, "event0"));
	free(out);

	out = capture_info(s.sda1, CLASSFS_PRINT_JSON, &r);
	CHECK_INT(r, 0);
	o = json_tokener_parse(out);
	CHECK(o != NULL);
	CHECK_STR(get_str(o, "name"), "sda1");
	CHECK_STR(get_str(o, "class"), "block");
	CHECK_STR(get_str(o, "parent"), "/class/block/sda");
	CHECK(json_object_object_get_ex(o, "device", NULL) && !get(o, "device"));
	CHECK_STR(get_str(o, "dev"), "8:1");
	CHECK_STR(get_str(o, "devtype"), "partition");
	CHECK_STR(get_str(get(o, "uevent"), "DEVNAME"), "sda1");
	CHECK_STR(get_str(get(o, "attributes"), "size"), "2048\n");
	CHECK_STR(get_str(get(o, "attributes"), "holders/note"), "two\nlines\n");
	CHECK(json_object_object_get_ex(get(o, "attributes"), "secret", NULL));
	CHECK(get(get(o, "attributes"), "secret") == NULL);
	CHECK_STR(get_str(get(o, "links"), "whole"), "../../sda");
	json_object_put(o);
	free(out);

	/* a physical device */
	out = capture_info(&s.ahci, CLASSFS_PRINT_TEXT, &r);
	CHECK_INT(r, 0);
	CHECK(out && strstr(out, "class: -\n") && strstr(out, "parent: /devices/pci0000:00\n"));
	free(out);
	sample_free(&s);
}

TEST(bad_arguments)
{
	struct sample s;
	struct classfs_device loose = { 0 };
	FILE *f = fopen("/dev/null", "w");
	FILE *full = fopen("/dev/full", "w");

	sample_build(&s, CLASSFS_LAYOUT_CLASS);
	CHECK_INT(classfs_tree_print(NULL, CLASSFS_PRINT_TEXT, f), -EINVAL);
	CHECK_INT(classfs_tree_print(s.t, CLASSFS_PRINT_TEXT, NULL), -EINVAL);
	CHECK_INT(classfs_tree_print(s.t, (enum classfs_print_format)3, f), -EINVAL);
	CHECK_INT(classfs_device_print_info(NULL, CLASSFS_PRINT_TEXT, f), -EINVAL);
	classfs_device_initialize(&loose);
	CHECK_INT(classfs_device_print_info(&loose, CLASSFS_PRINT_TEXT, f), -EINVAL);
	CHECK_INT(classfs_device_print_info(s.sda, (enum classfs_print_format)-1, f), -EINVAL);
	/* a full disk is reported */
	if (full) {
		CHECK_INT(classfs_tree_print(s.t, CLASSFS_PRINT_TEXT, full), -EIO);
		clearerr(full);
		CHECK_INT(classfs_tree_print(s.t, CLASSFS_PRINT_JSON, full), -EIO);
		clearerr(full);
		CHECK_INT(classfs_device_print_info(s.sda, CLASSFS_PRINT_TEXT, full), -EIO);
		fclose(full);
	}
	/* every reference the printers took was given back */
	CHECK_INT(classfs_tree_print(s.t, CLASSFS_PRINT_DOT, f), 0);
	fclose(f);
	classfs_device_put(&loose);
	sample_free(&s);
}
