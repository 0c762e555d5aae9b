// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sound_core.c - a sound core written the way a Linux 2.6.15 driver used
 * the class API: it includes only <classfs/kernel.h> and the C library.
 *
 * A statically defined class with a class attribute and a hotplug hook
 * that adds variables for cards and vetoes the event of a hidden device;
 * sound cards embedded in the driver's own structure (container_of),
 * each registered with class_device_register() and given attributes
 * after its ADD; a class interface registered between the two cards (so
 * its add() runs late for the first and on registration for the second)
 * that hangs the card's control and PCM devices below the card; and two
 * parentless devices, one of them hidden from hotplug.
 *
 * After init: class/sound/card0 and card1 (no numbers), each with
 * controlCn (116:n*32) and pcmCnD0p (116:n*32+16) nested in it,
 * class/sound/seq (116:1) and class/sound/timer (116:33, no ADD event).
 */
#include <stdio.h>
#include <string.h>

#include <classfs/kernel.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("seed-era sound core for the classfs tests");

#define SOUND_MAJOR	116
#define SNDRV_CARDS	2

struct snd_card {
	int number;
	char id[16];
	const char *longname;
	struct class_device *control;	/* made by the interface */
	struct class_device *pcm;
	struct class_device class_dev;
};

#define to_snd_card(cd) container_of(cd, struct snd_card, class_dev)

static struct snd_card cards[SNDRV_CARDS] = {
	{ .number = 0, .id = "PCH", .longname = "HDA Intel PCH at 0xf7f10000 irq 33" },
	{ .number = 1, .id = "HDMI", .longname = "HDA Intel HDMI at 0xf7f14000 irq 34" },
};
static struct class_device *seq_dev, *timer_dev;

static ssize_t version_show(struct class *cls, char *buf)
{
	return sprintf(buf, "1.0.10\n");
}

static struct class_attribute sound_class_attrs[] = {
	__ATTR(version, 0444, version_show, NULL),
	__ATTR_NULL,
};

static int sound_hotplug(struct class_device *cdev, char **envp, int num_envp,
			 char *buffer, int buffer_size)
{
	int i = 0, len = 0;

	if (!strcmp(cdev->class_id, "timer"))
		return -ENODEV;		/* no event for it */
	if (cdev->parent || !class_get_devdata(cdev))
		return 0;		/* nested and parentless nodes: nothing to add */
	if (add_hotplug_env_var(envp, num_envp, &i, buffer, buffer_size, &len,
				"SOUND_CARD=%d", to_snd_card(cdev)->number) ||
	    add_hotplug_env_var(envp, num_envp, &i, buffer, buffer_size, &len,
				"SOUND_ID=%s", to_snd_card(cdev)->id))
		return -ENOMEM;
	envp[i] = NULL;
	return 0;
}

static void card_release(struct class_device *cdev)
{
	printf("sound: card%d released\n", to_snd_card(cdev)->number);
}

static struct class sound_class = {
	.name		= "sound",
	.owner		= THIS_MODULE,
	.class_attrs	= sound_class_attrs,
	.hotplug	= sound_hotplug,
};

static ssize_t id_show(struct class_device *cdev, char *buf)
{
	return sprintf(buf, "%s\n", to_snd_card(cdev)->id);
}

/* an id is 1..15 letters or digits, as ALSA's snd_card_set_id wanted */
static ssize_t id_store(struct class_device *cdev, const char *buf, size_t count)
{
	struct snd_card *card = to_snd_card(cdev);
	size_t n = count;

	if (n && buf[n - 1] == '\n')
		n--;
	if (n == 0 || n >= sizeof(card->id))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!((buf[i] >= 'A' && buf[i] <= 'Z') || (buf[i] >= 'a' && buf[i] <= 'z') ||
		      (buf[i] >= '0' && buf[i] <= '9')))
			return -EINVAL;
	memcpy(card->id, buf, n);
	card->id[n] = '\0';
	return (ssize_t)count;
}

static ssize_t number_show(struct class_device *cdev, char *buf)
{
	return sprintf(buf, "%d\n", to_snd_card(cdev)->number);
}

static ssize_t longname_show(struct class_device *cdev, char *buf)
{
	return sprintf(buf, "%s\n", to_snd_card(cdev)->longname);
}

static CLASS_DEVICE_ATTR(id, 0644, id_show, id_store);
static CLASS_DEVICE_ATTR(number, 0444, number_show, NULL);
static CLASS_DEVICE_ATTR(longname, 0444, longname_show, NULL);

static int __init card_register(struct snd_card *card)
{
	struct class_device *cd = &card->class_dev;
	int err;

	cd->class = &sound_class;
	cd->release = card_release;
	class_set_devdata(cd, card);
	snprintf(cd->class_id, sizeof(cd->class_id), "card%d", card->number);
	err = class_device_register(cd);
	if (err)
		return err;
	/* files a driver adds after registering appear after the ADD event */
	if ((err = class_device_create_file(cd, &class_device_attr_id)) ||
	    (err = class_device_create_file(cd, &class_device_attr_number)) ||
	    (err = class_device_create_file(cd, &class_device_attr_longname))) {
		class_device_unregister(cd);
		return err;
	}
	return 0;
}

/* the control and PCM interfaces of every card live in the card's directory */
static int snd_intf_add(struct class_device *cdev, struct class_interface *intf)
{
	struct snd_card *card;
	int minor;

	if (cdev->parent || !class_get_devdata(cdev))
		return 0;
	card = to_snd_card(cdev);
	minor = card->number * 32;
	card->control = class_device_create(&sound_class, cdev, MKDEV(SOUND_MAJOR, minor),
					    NULL, "controlC%d", card->number);
	if (IS_ERR(card->control)) {
		int err = PTR_ERR(card->control);

		card->control = NULL;
		return err;
	}
	card->pcm = class_device_create(&sound_class, cdev, MKDEV(SOUND_MAJOR, minor + 16),
					NULL, "pcmC%dD0p", card->number);
	if (IS_ERR(card->pcm)) {
		int err = PTR_ERR(card->pcm);

		card->pcm = NULL;
		class_device_unregister(card->control);
		card->control = NULL;
		return err;
	}
	return 0;
}

static void snd_intf_remove(struct class_device *cdev, struct class_interface *intf)
{
	struct snd_card *card;

	if (cdev->parent || !class_get_devdata(cdev))
		return;
	card = to_snd_card(cdev);
	if (card->pcm)
		class_device_unregister(card->pcm);
	if (card->control)
		class_device_unregister(card->control);
	card->pcm = card->control = NULL;
}

static struct class_interface snd_interface = {
	.class	= &sound_class,
	.add	= snd_intf_add,
	.remove	= snd_intf_remove,
};

static int __init alsa_sound_init(void)
{
	int err;

	err = class_register(&sound_class);
	if (err)
		return err;
	seq_dev = class_device_create(&sound_class, NULL, MKDEV(SOUND_MAJOR, 1), NULL, "seq");
	if (IS_ERR(seq_dev)) {
		err = PTR_ERR(seq_dev);
		goto out_class;
	}
	err = card_register(&cards[0]);
	if (err)
		goto out_seq;
	err = class_interface_register(&snd_interface);	/* late for card0 */
	if (err)
		goto out_card0;
	err = card_register(&cards[1]);
	if (err)
		goto out_intf;
	timer_dev = class_device_create(&sound_class, NULL, MKDEV(SOUND_MAJOR, 33), NULL,
					"timer");
	if (IS_ERR(timer_dev)) {
		err = PTR_ERR(timer_dev);
		goto out_card1;
	}
	return 0;

out_card1:
	class_device_unregister(&cards[1].class_dev);
out_intf:
	class_interface_unregister(&snd_interface);
out_card0:
	class_device_unregister(&cards[0].class_dev);
out_seq:
	class_device_destroy(&sound_class, MKDEV(SOUND_MAJOR, 1));
out_class:
	class_unregister(&sound_class);
	return err;
}

static void __exit alsa_sound_exit(void)
{
	class_device_destroy(&sound_class, MKDEV(SOUND_MAJOR, 33));
	/* remove() takes each card's nested devices away */
	class_interface_unregister(&snd_interface);
	class_device_unregister(&cards[1].class_dev);
	class_device_unregister(&cards[0].class_dev);
	class_device_destroy(&sound_class, MKDEV(SOUND_MAJOR, 1));
	class_unregister(&sound_class);
}

module_init(alsa_sound_init);
module_exit(alsa_sound_exit);
