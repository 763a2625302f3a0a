/*
 * cmd_device.c - `ipu device probe` and `ipu device info`: what a user with
 * a C600 runs first (docs/hardware.md). probe lists the driver's device
 * nodes and opens each; info opens one device (a card, hw:N, or the card
 * model, model:c600), reads its registers and tile 0's debug state, and on
 * request resets it, replays a configuration capture and logs every access.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rt/hw.h"
#include "../util/util.h"
#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu device probe\n"
	        "       ipu device info [--device NAME] [--reset] "
	        "[--config FILE] [--log FILE [--force]]\n"
	        "                   [--tiles N] [--facts]\n"
	        "  probe     list the cards of Graphcore's kernel driver "
	        "(/dev/ipuN) and open each\n"
	        "  info      open one device and report its registers and "
	        "tile 0's debug state\n"
	        "  --device NAME  hw:N (the card /dev/ipuN, default hw:0) or "
	        "model:c600[:tiles=N]\n"
	        "                 (the register-level card model around the "
	        "emulator)\n"
	        "  --reset        reset the chip through the ICU mailbox "
	        "first\n"
	        "  --config FILE  then replay an IPUCFG1 configuration "
	        "capture\n"
	        "  --log FILE     every register access and ioctl, one line "
	        "each ('-': stderr)\n"
	        "  --force        replace an existing log file\n"
	        "  --tiles N      the state of tiles 0..N-1 through the tile "
	        "debug interface:\n"
	        "                 each context that is not idle, its pc, "
	        "its exception\n"
	        "  --facts        print the card's facts and decisions with "
	        "their sources\n"
	        "Exit status: 0 on success, 1 when no device can be opened "
	        "or a step fails, 2 on a usage error.\n");
}

static int
has_prefix_num(const char *s, const char *p)
{
	size_t n = strlen(p);
	if (strncmp(s, p, n) || !s[n])
		return 0;
	for (s += n; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int
probe(void)
{
	const char *dir = hw_dev_dir();
	DIR *dp = opendir(dir);
	if (!dp) {
		fprintf(stderr, "ipu device probe: %s: %s\n", dir,
		        strerror(errno));
		return 1;
	}
	int found = 0, opened = 0;
	for (struct dirent *e; (e = readdir(dp));) {
		if (!has_prefix_num(e->d_name, "ipu"))
			continue;
		found++;
		char name[300];
		snprintf(name, sizeof name, "hw:%s", e->d_name + 3);
		ipu_error err;
		HwDev *d = hw_open(name, NULL, &err);
		if (!d) {
			printf("%s (%s/%s): cannot open: %s\n", name, dir,
			       e->d_name, err.msg);
			continue;
		}
		uint32_t ccsr = 0;
		int rc = hw_read32(d, CARD_REG_CCSR, &ccsr, &err);
		printf("%s (%s/%s): opened, 0x%x-byte configuration BAR "
		       "mapped, attached; CCSR %s0x%08x\n",
		       name, dir, e->d_name, CARD_BAR_SIZE,
		       rc ? "unreadable " : "", ccsr);
		opened++;
		hw_close(d);
	}
	closedir(dp);
	if (!found) {
		fprintf(stderr,
		        "ipu device probe: no %s/ipuN device nodes: no C600 "
		        "card here, or Graphcore's kernel driver is not "
		        "loaded. The card model needs neither: ipu device "
		        "info --device model:c600\n",
		        dir);
		return 1;
	}
	printf("%d card%s found, %d opened. Firmware versions: not read "
	       "(no public source says where they are).\n",
	       found, found == 1 ? "" : "s", opened);
	return opened ? 0 : 1;
}

static void
print_facts(void)
{
	static const char *const kinds[] = {"fact", "ioctl", "DECISION"};
	for (int i = 0; i < card_nfacts; i++) {
		const CardFact *f = &card_facts[i];
		int k = f->kind == 'C' ? 0 : f->kind == 'I' ? 1 : 2;
		printf("%-20s 0x%08x  %-8s %s\n", f->name, f->value, kinds[k],
		       f->source);
	}
}

static int
info(HwDev *d, int do_reset, const char *config, uint32_t tiles)
{
	ipu_error err;
	uint32_t v;
	printf("device %s (%s): opened and attached, configuration BAR "
	       "0x%x bytes\n",
	       hw_name(d), hw_kind(d), CARD_BAR_SIZE);
	if (do_reset) {
		if (hw_reset(d, &err))
			goto fail;
		printf("reset: ICU reset through the mailbox, answered\n");
	}
	if (config) {
		uint8_t *bytes;
		size_t len;
		Diag dg;
		if (read_file(config, &bytes, &len, &dg)) {
			fprintf(stderr, "ipu device info: %s\n", dg.msg);
			return 1;
		}
		int rc = hw_replay_config(d, bytes, len, config, &err);
		free(bytes);
		if (rc)
			goto fail;
		printf("configuration: %s replayed (%zu register writes)\n",
		       config, (len - CARD_CFG_HEADER) / 8);
	}
	static const uint32_t regs[] = {CARD_REG_CCSR, CARD_REG_AUTOLD_CSR,
	                                CARD_REG_HSP_GS1, CARD_REG_HSP_GS2,
	                                CARD_REG_XWINDOW};
	for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
		char name[40];
		if (hw_read32(d, regs[i], &v, &err))
			goto fail;
		printf("  %-12s 0x%05x = 0x%08x\n",
		       card_reg_name(regs[i], name, sizeof name), regs[i], v);
	}
	if (hw_tile_states(d, 0, &v, &err))
		goto fail;
	printf("tile 0 (physical) context states:");
	for (int c = 0; c < 7; c++)
		printf(" %u", v >> (2 * c) & 3);
	printf("  (0 idle, 1 running, 2 stopped, 3 exception)\n");
	const Chip *c = chip_default();
	for (uint32_t t = 0; t < tiles; t++) {
		char line[600];
		if (hw_tile_report(d, chip_physical(c, t), line, sizeof line,
		                   &err))
			goto fail;
		printf("tile %u, %s\n", t, line);
	}
	return 0;
fail:
	fprintf(stderr, "ipu device info: %s\n", err.msg);
	return 1;
}

int
cmd_device(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "probe")) {
		if (argc > 2) {
			fprintf(stderr, "ipu device probe: unexpected '%s'\n",
			        argv[2]);
			return 2;
		}
		return probe();
	}
	if (strcmp(argv[1], "info")) {
		fprintf(stderr, "ipu device: unknown subcommand '%s'\n",
		        argv[1]);
		usage(stderr);
		return 2;
	}
	const char *device = "hw:0", *config = NULL, *logpath = NULL;
	int do_reset = 0, facts = 0, force = 0;
	uint32_t tiles = 0;
	for (int i = 2; i < argc; i++) {
		int missing = 0;
		const char *v;
		if ((v = cli_opt_value(argc, argv, &i, "--device", &missing)))
			device = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--config",
		                            &missing)))
			config = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--log", &missing)))
			logpath = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--tiles",
		                            &missing))) {
			char *end;
			unsigned long n = strtoul(v, &end, 10);
			if (*v < '0' || *v > '9' || *end || !n ||
			    n > chip_default()->tiles) {
				fprintf(stderr,
				        "ipu device info: --tiles must be "
				        "1..%u\n",
				        chip_default()->tiles);
				return 2;
			}
			tiles = (uint32_t)n;
		} else if (!missing && !strcmp(argv[i], "--reset"))
			do_reset = 1;
		else if (!missing && !strcmp(argv[i], "--facts"))
			facts = 1;
		else if (!missing && !strcmp(argv[i], "--force"))
			force = 1;
		else if (!missing) {
			fprintf(stderr,
			        "ipu device info: unknown option '%s'\n",
			        argv[i]);
			return 2;
		}
		if (missing) {
			fprintf(stderr, "ipu device info: %s needs a value\n",
			        argv[i]);
			return 2;
		}
	}
	if (facts) {
		print_facts();
		return 0;
	}
	/* The log is written through a temporary and kept whether or not
	 * the device's steps succeed: it is how a failure is reported. */
	FILE *log = NULL;
	char tmp[4200];
	Diag dg;
	if (logpath && strcmp(logpath, "-")) {
		const char *outs[] = {logpath}, *ins[] = {config};
		int rc = cli_check_outputs("ipu device info", outs, 1, ins,
		                           config ? 1 : 0, force);
		if (rc)
			return rc;
		if (!(log = file_create_temp(logpath, tmp, sizeof tmp, &dg))) {
			fprintf(stderr, "ipu device info: %s\n", dg.msg);
			return 1;
		}
	} else if (logpath)
		log = stderr;
	ipu_error err;
	HwDev *d = hw_open(device, log, &err);
	int rc;
	if (!d) {
		fprintf(stderr, "ipu device info: %s\n", err.msg);
		rc = err.kind == IPU_ERR_ARGUMENT ? 2 : 1;
	} else {
		rc = info(d, do_reset, config, tiles);
		hw_close(d);
	}
	if (log && log != stderr &&
	    file_commit_temp(log, tmp, logpath, force, &dg)) {
		fprintf(stderr, "ipu device info: %s\n", dg.msg);
		return 1;
	}
	return rc;
}
