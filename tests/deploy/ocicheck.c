// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * ocicheck: is DIR (an unpacked OCI image layout, as tools/image.sh writes
 * it) an image named REF whose entrypoint is ENTRYPOINT...? Read as a
 * runtime reads it (image-spec image-layout.md, image-index.md,
 * manifest.md, config.md): oci-layout's version; the index entry annotated
 * io.containerd.image.name REF; the manifest, config and layer blobs that
 * the descriptors name exist under blobs/sha256/ with the sizes they give
 * (that each blob's content hashes to its name is checked beside this, by
 * sha256sum); the config's Entrypoint; one diff_id per layer, equal to the
 * layer's digest for an uncompressed layer.
 * Prints one line per fault and exits 1; silent and 0 when all holds.
 * Usage: ocicheck DIR REF ENTRYPOINT...
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int faults;
static const char *dir;

static void fault(const char *what)
{
	printf("%s\n", what);
	faults++;
}

static json_t *load(const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);

	if (!j)
		printf("%s: not JSON: %s (line %d)\n", path, e.text, e.line);
	return j;
}

/* The blob a descriptor names, checked to exist with the size it gives;
 * its path in PATH. MEDIA: the media type the descriptor must have. */
static int blob(json_t *desc, const char *media, const char *what, char *path, size_t len)
{
	const char *d = json_string_value(json_object_get(desc, "digest"));
	const char *m = json_string_value(json_object_get(desc, "mediaType"));
	json_t *size = json_object_get(desc, "size");
	struct stat st;

	if (!m || strcmp(m, media)) {
		printf("%s: mediaType %s, not %s\n", what, m ? m : "(none)", media);
		faults++;
	}
	if (!d || strncmp(d, "sha256:", 7) || strlen(d) != 7 + 64 || strspn(d + 7, "0123456789abcdef") != 64) {
		printf("%s: digest %s is not sha256:<64 hex digits>\n", what, d ? d : "(none)");
		faults++;
		return -1;
	}
	snprintf(path, len, "%s/blobs/sha256/%s", dir, d + 7);
	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		printf("%s: blob %s missing\n", what, d);
		faults++;
		return -1;
	}
	if (!json_is_integer(size) || json_integer_value(size) != (json_int_t)st.st_size) {
		printf("%s: size %lld, the blob has %lld bytes\n", what,
		       json_is_integer(size) ? (long long)json_integer_value(size) : -1LL, (long long)st.st_size);
		faults++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096], mpath[4096], cpath[4096], lpath[4096];
	json_t *layout, *index, *manifest = NULL, *config = NULL, *m, *ep, *layers, *diffs;
	const char *ref;
	size_t i;

	if (argc < 4) {
		fprintf(stderr, "usage: ocicheck DIR REF ENTRYPOINT...\n");
		return 2;
	}
	dir = argv[1], ref = argv[2];
	snprintf(path, sizeof(path), "%s/oci-layout", dir);
	layout = load(path);
	if (!layout || strcmp(json_string_value(json_object_get(layout, "imageLayoutVersion")) ?: "", "1.0.0"))
		fault("oci-layout: imageLayoutVersion is not 1.0.0");
	snprintf(path, sizeof(path), "%s/index.json", dir);
	index = load(path);
	if (!index)
		return 1;
	if (json_integer_value(json_object_get(index, "schemaVersion")) != 2)
		fault("index.json: schemaVersion is not 2");
	json_array_foreach(json_object_get(index, "manifests"), i, m) {
		const char *name = json_string_value(
			json_object_get(json_object_get(m, "annotations"), "io.containerd.image.name"));

		if (!name || strcmp(name, ref))
			continue;
		if (!blob(m, "application/vnd.oci.image.manifest.v1+json", "index.json: the manifest", mpath,
			  sizeof(mpath)))
			manifest = load(mpath);
		break;
	}
	if (i == json_array_size(json_object_get(index, "manifests"))) {
		printf("index.json: no manifest named %s\n", ref);
		return 1;
	}
	if (!manifest)
		return 1;
	if (json_integer_value(json_object_get(manifest, "schemaVersion")) != 2)
		fault("manifest: schemaVersion is not 2");
	if (!blob(json_object_get(manifest, "config"), "application/vnd.oci.image.config.v1+json",
		  "manifest: the config", cpath, sizeof(cpath)))
		config = load(cpath);
	layers = json_object_get(manifest, "layers");
	if (!json_array_size(layers))
		fault("manifest: no layers");
	if (!config)
		return 1;
	if (!json_string_value(json_object_get(config, "architecture")) ||
	    strcmp(json_string_value(json_object_get(config, "os")) ?: "", "linux"))
		fault("config: no architecture, or os is not linux");
	ep = json_object_get(json_object_get(config, "config"), "Entrypoint");
	if (json_array_size(ep) != (size_t)(argc - 3))
		printf("config: Entrypoint has %zu words, not %d\n", json_array_size(ep), argc - 3), faults++;
	for (i = 0; i < json_array_size(ep) && i < (size_t)(argc - 3); i++)
		if (strcmp(json_string_value(json_array_get(ep, i)) ?: "", argv[3 + i]))
			printf("config: Entrypoint word %zu is %s, not %s\n", i,
			       json_string_value(json_array_get(ep, i)) ?: "(not a string)", argv[3 + i]), faults++;
	if (strcmp(json_string_value(json_object_get(json_object_get(config, "rootfs"), "type")) ?: "", "layers"))
		fault("config: rootfs.type is not layers");
	diffs = json_object_get(json_object_get(config, "rootfs"), "diff_ids");
	if (json_array_size(diffs) != json_array_size(layers))
		printf("config: %zu diff_ids for %zu layers\n", json_array_size(diffs), json_array_size(layers)), faults++;
	for (i = 0; i < json_array_size(layers); i++) {
		json_t *l = json_array_get(layers, i);
		char what[64];

		snprintf(what, sizeof(what), "manifest: layer %zu", i);
		if (blob(l, "application/vnd.oci.image.layer.v1.tar", what, lpath, sizeof(lpath)))
			continue;
		/* uncompressed: the diff_id is the layer's own digest */
		if (strcmp(json_string_value(json_array_get(diffs, i)) ?: "",
			   json_string_value(json_object_get(l, "digest"))))
			printf("config: diff_id %zu is not layer %zu's digest\n", i, i), faults++;
	}
	return faults ? 1 : 0;
}
