// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * keys.c - the two tables the record loader decides by, kept in this one
 * place (docs/records.md points here):
 *
 *  - the bus list: a recorded device whose SUBSYSTEM is one of Linux's bus
 *    types (struct bus_type names) is a physical device on that bus; any
 *    other SUBSYSTEM is a class.  A recorded `L: subsystem=` link decides
 *    first (".../bus/NAME" or ".../class/NAME").
 *  - the uevent keys: which recorded E: properties Linux itself puts in a
 *    device's `uevent` (and its kernel events), per subsystem.  Everything
 *    else udev added (ID_*, DEVLINKS, TAGS, hwdb and rule keys) goes only
 *    to the udev database.
 */
#include "record-internal.h"

#include <pthread.h>
#include <stdlib.h>

/* Linux's bus types (sorted: bsearch) */
static const char *const bus_names[] = {
	"ac97", "acpi", "amba", "ap", "auxiliary", "bcma", "ccw", "ccwgroup", "cdx",
	"cec", "clockevents", "clocksource", "container", "coresight", "counter", "cpu",
	"css", "cxl", "dax", "dfl", "dio", "ecard", "edac", "eisa", "event_source",
	"fcoe", "firewire", "fsi", "fsl-mc", "gameport", "gbphy", "gpio", "greybus",
	"hdaudio", "hid", "hsi", "i2c", "i3c", "ieee1394", "iio", "intel_th", "ipack",
	"isa", "iscsi_flashnode", "ishtp", "iucv", "locomo-bus", "machinecheck",
	"maple", "mcb", "mdev", "mdio_bus", "media", "mei", "memory", "memory_tiering",
	"mhi", "mipi-dsi", "mmc", "mmc_rpmb", "most", "nd", "node", "ntb",
	"ntb_transport", "nubus", "nvmem", "parisc", "pci", "pci-epf", "pci_express",
	"pcmcia", "peci", "platform", "pnp", "ps3_system_bus", "rapidio", "rpmsg",
	"sa1111-rab", "scsi", "sdio", "serial", "serial-base", "serio", "siox",
	"slimbus", "snd_seq", "soc", "soundwire", "spi", "spmi", "ssam", "ssb",
	"superhyway", "tc", "tee", "thunderbolt", "typec", "ulpi", "usb",
	"usb-serial", "vdpa", "vio", "virtio", "vmbus", "vme", "w1", "wmi",
	"workqueue", "xen", "xen-backend", "zorro",
};

static int cmp_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

/**
 * cfs_rec_is_bus() - is @name (@len bytes) one of Linux's bus types?
 */
bool cfs_rec_is_bus(const char *name, size_t len)
{
	char buf[64];

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, name, len);
	buf[len] = '\0';
	return bsearch(buf, bus_names, sizeof(bus_names) / sizeof(bus_names[0]),
		       sizeof(bus_names[0]), cmp_name) != NULL;
}

bool classfs_record_subsystem_is_bus(const char *subsystem)
{
	return subsystem && cfs_rec_is_bus(subsystem, strlen(subsystem));
}

/*
 * The keys of `uevent` per subsystem.  A trailing '*' matches a prefix.
 * The keys every subsystem may have come first (subsystem NULL).
 */
struct uevent_keys {
	const char *subsystem;
	const char *const *keys;
};

#define KEYS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const struct uevent_keys uevent_keys[] = {
	{ NULL, KEYS("MAJOR", "MINOR", "DEVNAME", "DEVTYPE", "DRIVER", "MODALIAS",
		     "DEVMODE", "DEVUID", "DEVGID") },
	{ "usb", KEYS("PRODUCT", "TYPE", "BUSNUM", "DEVNUM", "INTERFACE") },
	{ "pci", KEYS("PCI_CLASS", "PCI_ID", "PCI_SUBSYS_ID", "PCI_SLOT_NAME") },
	{ "hid", KEYS("HID_ID", "HID_NAME", "HID_PHYS", "HID_UNIQ") },
	{ "input", KEYS("PRODUCT", "NAME", "PHYS", "UNIQ", "PROP", "EV", "KEY", "REL", "ABS",
			"MSC", "LED", "SND", "FF", "SW") },
	{ "net", KEYS("INTERFACE", "IFINDEX") },
	{ "block", KEYS("PARTN", "PARTNAME", "DISKSEQ") },
	{ "serio", KEYS("SERIO_TYPE", "SERIO_PROTO", "SERIO_ID", "SERIO_EXTRA",
			"SERIO_FIRMWARE") },
	{ "platform", KEYS("OF_*") },
	{ "i2c", KEYS("OF_*") },
	{ "spi", KEYS("OF_*") },
	{ "mmc", KEYS("MMC_TYPE", "MMC_NAME", "SDIO_CLASS", "SDIO_ID", "SDIO_REVISION") },
	{ "sdio", KEYS("SDIO_CLASS", "SDIO_ID", "SDIO_REVISION") },
	{ "power_supply", KEYS("POWER_SUPPLY_*") },
	{ "rfkill", KEYS("RFKILL_NAME", "RFKILL_TYPE", "RFKILL_STATE", "RFKILL_SW_PREV",
			 "RFKILL_HW_PREV") },
	{ "wmi", KEYS("WMI_GUID") },
	{ "scsi", KEYS("SDEV_MEDIA_CHANGE") },
	{ "firmware", KEYS("FIRMWARE", "TIMEOUT", "ASYNC") },
};

static bool key_in(const char *const *keys, const char *key, size_t keylen)
{
	for (; *keys; keys++) {
		size_t n = strlen(*keys);

		if (n && (*keys)[n - 1] == '*') {
			if (keylen >= n - 1 && !memcmp(*keys, key, n - 1))
				return true;
		} else if (n == keylen && !memcmp(*keys, key, n)) {
			return true;
		}
	}
	return false;
}

/**
 * cfs_rec_uevent_key() - does Linux put @key in the `uevent` of a device of
 * @subsystem (NULL: none)?
 */
bool cfs_rec_uevent_key(const char *subsystem, const char *key, size_t keylen)
{
	if (key_in(uevent_keys[0].keys, key, keylen))
		return true;
	if (!subsystem)
		return false;
	for (size_t i = 1; i < sizeof(uevent_keys) / sizeof(uevent_keys[0]); i++)
		if (!strcmp(uevent_keys[i].subsystem, subsystem))
			return key_in(uevent_keys[i].keys, key, keylen);
	return false;
}

/**
 * cfs_rec_udev_only_key() - keys the udev database holds in lines of their
 * own (S:, G:, Q:, I:) rather than as E: properties.
 */
bool cfs_rec_udev_only_key(const char *key)
{
	return !strcmp(key, "DEVLINKS") || !strcmp(key, "TAGS") || !strcmp(key, "CURRENT_TAGS") ||
	       !strcmp(key, "USEC_INITIALIZED");
}

/*
 * Names that come back in nearly every device (E: keys, attribute and link
 * names): a device's side data keeps a one-byte code for each instead of a
 * copy.  At most 255; the order is the codes' (code = index + 1): append only
 * within a process's life, any order across builds (codes never leave it).
 */
static const char *const common_names[] = {
	"DEVNAME", "DEVTYPE", "MAJOR", "MINOR", "SUBSYSTEM", "DRIVER", "MODALIAS",
	"PARTN", "PARTNAME", "DISKSEQ", "DEVLINKS", "TAGS", "CURRENT_TAGS",
	"USEC_INITIALIZED", "PRODUCT", "TYPE", "BUSNUM", "DEVNUM", "INTERFACE", "IFINDEX",
	"NAME", "PHYS", "UNIQ", "PROP", "EV", "KEY", "MSC", "LED", "ABS", "REL", "SW",
	"PCI_CLASS", "PCI_ID", "PCI_SUBSYS_ID", "PCI_SLOT_NAME", "HID_ID", "HID_NAME",
	"HID_PHYS", "HID_UNIQ", "ID_BUS", "ID_MODEL", "ID_MODEL_ENC", "ID_MODEL_ID",
	"ID_SERIAL", "ID_SERIAL_SHORT", "ID_VENDOR", "ID_VENDOR_ENC", "ID_VENDOR_ID",
	"ID_REVISION", "ID_PATH", "ID_PATH_TAG", "ID_FOR_SEAT", "ID_TYPE", "ID_INPUT",
	"ID_USB_DRIVER", "ID_USB_INTERFACES", "ID_USB_INTERFACE_NUM",
	"ID_MODEL_FROM_DATABASE", "ID_VENDOR_FROM_DATABASE", "ID_PCI_CLASS_FROM_DATABASE",
	"ID_PCI_SUBCLASS_FROM_DATABASE", "ID_PCI_INTERFACE_FROM_DATABASE", "ID_PART_TABLE_TYPE",
	"ID_PART_TABLE_UUID", "ID_PART_ENTRY_NUMBER", "ID_PART_ENTRY_UUID", "ID_FS_TYPE",
	"ID_FS_UUID", "ID_WWN",
	/* attributes and links */
	"dev", "size", "start", "partition", "removable", "ro", "device", "driver",
	"subsystem", "firmware_node", "port", "modalias", "uevent", "vendor", "class",
	"revision", "subsystem_vendor", "subsystem_device", "irq", "enable", "numa_node",
	"local_cpus", "local_cpulist", "resource", "config", "descriptors", "authorized",
	"busnum", "devnum", "devpath", "speed", "version", "maxchild", "manufacturer",
	"product", "serial", "idVendor", "idProduct", "bcdDevice", "bDeviceClass",
	"bDeviceSubClass", "bDeviceProtocol", "bNumInterfaces", "bNumConfigurations",
	"bConfigurationValue", "bmAttributes", "bMaxPower", "bMaxPacketSize0",
	"power/async", "power/control", "power/runtime_status", "power/runtime_enabled",
	"power/runtime_active_time", "power/runtime_suspended_time", "power/runtime_usage",
	"power/runtime_active_kids", "power/wakeup", "capability", "ext_range", "range",
	"alignment_offset", "discard_alignment", "stat", "inflight", "events",
	"events_async", "events_poll_msecs", "hidden", "queue/logical_block_size",
};

#define NCOMMON (sizeof(common_names) / sizeof(common_names[0]))
#define CODE_SLOTS 512

static uint16_t code_slots[CODE_SLOTS];	/* index + 1, 0 = empty */
static pthread_once_t code_once = PTHREAD_ONCE_INIT;

static void codes_init(void)
{
	_Static_assert(NCOMMON <= 255, "one byte per code");
	for (size_t i = 0; i < NCOMMON; i++) {
		uint32_t h = cfs_rec_hash(common_names[i], strlen(common_names[i]));

		while (code_slots[h % CODE_SLOTS])
			h++;
		code_slots[h % CODE_SLOTS] = (uint16_t)(i + 1);
	}
}

/** cfs_rec_name_code() - the code of a common name, 0 for any other */
unsigned int cfs_rec_name_code(const char *name, size_t len)
{
	uint32_t h = cfs_rec_hash(name, len);

	pthread_once(&code_once, codes_init);
	for (;; h++) {
		unsigned int v = code_slots[h % CODE_SLOTS];

		if (!v)
			return 0;
		if (!strncmp(common_names[v - 1], name, len) && !common_names[v - 1][len])
			return v;
	}
}

/** cfs_rec_name_of() - the name of a code from cfs_rec_name_code() */
const char *cfs_rec_name_of(unsigned int code)
{
	return code && code <= NCOMMON ? common_names[code - 1] : "";
}
