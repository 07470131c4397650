// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* OCI JSON: config.json, a LinuxResources object, a bare array; defaults of
 * missing fields, and errors pointing at the offending element or field. */
#include "testutil.h"

/* ---- the three shapes ------------------------------------------------------ */

UTEST(oci_config_json_reads_linux_resources_devices_in_order)
{
	struct devcg_rules *r = PARSE_OK(
		"{\n"
		"  \"ociVersion\": \"1.0.2\",\n"
		"  \"process\": {\"args\": [\"sh\", \"-c\", \"echo {[}]\"]},\n"
		"  \"root\": {\"path\": \"rootfs\"},\n"
		"  \"linux\": {\n"
		"    \"namespaces\": [{\"type\": \"pid\"}],\n"
		"    \"resources\": {\n"
		"      \"memory\": {\"limit\": 1048576},\n"
		"      \"devices\": [\n"
		"        {\"allow\": false, \"access\": \"rwm\"},\n"
		"        {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 3, \"access\": \"rwm\"},\n"
		"        {\"allow\": true, \"type\": \"b\", \"major\": 8, \"minor\": 0, \"access\": \"r\"},\n"
		"        {\"allow\": false, \"type\": \"c\", \"major\": 1, \"minor\": 3, \"access\": \"w\"}\n"
		"      ]\n"
		"    }\n"
		"  }\n"
		"}\n");

	CHECK_INT(devcg_rules_count(r), 4);
	CHECK_RULE(r, 0, DENY, DEVCG_ALL, ANY, ANY, RWM);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 1, 3, RWM);
	CHECK_RULE(r, 2, ALLOW, DEVCG_BLOCK, 8, 0, R);
	CHECK_RULE(r, 3, DENY, DEVCG_CHAR, 1, 3, W);
	devcg_rules_free(r);
}

UTEST(oci_linux_resources_object_reads_devices)
{
	struct devcg_rules *r = PARSE_OK(
		"{\"cpu\": {\"shares\": 512}, \"devices\": ["
		"{\"allow\": true, \"type\": \"c\", \"major\": 10, \"minor\": 200, \"access\": \"rw\"}]}");

	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 10, 200, R | W);
	devcg_rules_free(r);
}

UTEST(oci_bare_array_of_device_rules)
{
	struct devcg_rules *r = PARSE_OK(
		"[{\"allow\": false, \"type\": \"a\"},"
		" {\"allow\": true, \"type\": \"b\", \"major\": 7, \"minor\": 1, \"access\": \"m\"}]");

	CHECK_INT(devcg_rules_count(r), 2);
	CHECK_RULE(r, 0, DENY, DEVCG_ALL, ANY, ANY, RWM);
	CHECK_RULE(r, 1, ALLOW, DEVCG_BLOCK, 7, 1, M);
	devcg_rules_free(r);
}

UTEST(oci_no_device_rules_is_an_empty_list)
{
	static const char *texts[] = {
		"[]",
		"{\"devices\": []}",
		"{\"devices\": null}",
		"{\"ociVersion\": \"1.0.2\", \"linux\": {}}",
		"{\"linux\": {\"resources\": {}}}",
		"{\"linux\": {\"resources\": {\"devices\": null}}}",
		"{\"linux\": {\"resources\": {\"devices\": []}}}",
	};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct devcg_rules *r = PARSE_OK(texts[i]);

		CHECK_MSG(devcg_rules_count(r) == 0, "%s gave rules", texts[i]);
		devcg_rules_free(r);
	}
}

/* ---- defaults ---------------------------------------------------------------- */

UTEST(oci_missing_major_or_minor_is_the_wildcard)
{
	struct devcg_rules *r = PARSE_OK(
		"[{\"allow\": true, \"type\": \"c\", \"access\": \"r\"},"
		" {\"allow\": true, \"type\": \"c\", \"major\": 5, \"access\": \"r\"},"
		" {\"allow\": true, \"type\": \"b\", \"minor\": 5, \"access\": \"r\"}]");

	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, ANY, ANY, R);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 5, ANY, R);
	CHECK_RULE(r, 2, ALLOW, DEVCG_BLOCK, ANY, 5, R);
	devcg_rules_free(r);
}

UTEST(oci_minus_one_or_null_major_minor_is_the_wildcard)
{
	struct devcg_rules *r = PARSE_OK(
		"[{\"allow\": true, \"type\": \"c\", \"major\": -1, \"minor\": -1, \"access\": \"w\"},"
		" {\"allow\": true, \"type\": \"c\", \"major\": null, \"minor\": 0, \"access\": \"w\"}]");

	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, ANY, ANY, W);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, ANY, 0, W);
	devcg_rules_free(r);
}

UTEST(oci_missing_or_null_access_is_rwm)
{
	struct devcg_rules *r = PARSE_OK(
		"[{\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 3},"
		" {\"allow\": false, \"type\": \"b\", \"major\": 8, \"minor\": 1, \"access\": null}]");

	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, RWM);
	CHECK_RULE(r, 1, DENY, DEVCG_BLOCK, 8, 1, RWM);
	devcg_rules_free(r);
}

UTEST(oci_missing_or_null_type_is_a_like_runc)
{
	struct devcg_rules *r = PARSE_OK("[{\"allow\": false}, {\"allow\": true, \"type\": null, "
					 "\"major\": -1, \"access\": \"mwr\"}]");

	CHECK_RULE(r, 0, DENY, DEVCG_ALL, ANY, ANY, RWM);
	CHECK_RULE(r, 1, ALLOW, DEVCG_ALL, ANY, ANY, RWM);
	devcg_rules_free(r);
}

UTEST(oci_largest_numbers_below_the_wildcard_are_accepted)
{
	struct devcg_rules *r = PARSE_OK("[{\"allow\": true, \"type\": \"c\", \"major\": 4294967294, "
					 "\"minor\": 0, \"access\": \"r\"}]");

	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 4294967294u, 0, R);
	devcg_rules_free(r);
}

UTEST(oci_unknown_fields_are_ignored)
{
	struct devcg_rules *r = PARSE_OK("[{\"allow\": true, \"type\": \"c\", \"major\": 1, "
					 "\"minor\": 3, \"access\": \"r\", \"comment\": [1, {}]}]");

	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, R);
	devcg_rules_free(r);
}

/* ---- errors at the offending element or field --------------------------------- */

UTEST(oci_bad_type_points_at_the_type_value)
{
	PARSE_ERR("[{\"allow\": true, \"type\": \"x\"}]", -EINVAL,
		  "in:1:26: \"type\" must be \"a\", \"b\" or \"c\", not \"x\"");
	PARSE_ERR("[{\"allow\": true, \"type\": \"char\"}]", -EINVAL,
		  "in:1:26: \"type\" must be \"a\", \"b\" or \"c\", not \"char\"");
	PARSE_ERR("[{\"allow\": true, \"type\": 99}]", -EINVAL,
		  "in:1:26: \"type\" must be \"a\", \"b\" or \"c\"");
}

UTEST(oci_bad_access_points_at_the_access_value)
{
	PARSE_ERR("[\n {\"allow\": true,\n  \"access\": \"rwx\"}]", -EINVAL,
		  "in:3:13: \"access\" must be letters of 'rwm', not \"rwx\"");
	PARSE_ERR("[{\"allow\": true, \"type\": \"c\", \"access\": \"\"}]", -EINVAL,
		  "in:1:41: \"access\" must be a non-empty subset of 'rwm'");
	PARSE_ERR("[{\"allow\": true, \"type\": \"c\", \"access\": \"rwmr\"}]", -EINVAL,
		  "in:1:41: \"access\" must be a non-empty subset of 'rwm'");
	PARSE_ERR("[{\"allow\": true, \"type\": \"c\", \"access\": 7}]", -EINVAL,
		  "in:1:41: \"access\" must be a string of 'rwm'");
}

UTEST(oci_missing_allow_points_at_the_element)
{
	PARSE_ERR("[{\"allow\": true},\n   {\"type\": \"c\", \"access\": \"r\"}]", -EINVAL,
		  "in:2:4: \"allow\" must be present and be true or false");
}

UTEST(oci_non_boolean_allow_points_at_its_value)
{
	PARSE_ERR("[{\"allow\":1}]", -EINVAL,
		  "in:1:11: \"allow\" must be present and be true or false");
	PARSE_ERR("[{\"allow\": \"true\"}]", -EINVAL,
		  "in:1:12: \"allow\" must be present and be true or false");
	PARSE_ERR("[{\"allow\": null}]", -EINVAL,
		  "in:1:12: \"allow\" must be present and be true or false");
}

UTEST(oci_bad_numbers_point_at_the_field)
{
	PARSE_ERR("[{\"allow\":true,\"type\":\"c\",\"major\":-2}]", -ERANGE,
		  "in:1:35: \"major\" is out of range");
	PARSE_ERR("[{\"allow\":true,\"type\":\"c\",\"major\":4294967295}]", -ERANGE,
		  "in:1:35: \"major\" is out of range");
	PARSE_ERR("[{\"allow\":true,\"type\":\"c\",\"minor\":1.5}]", -EINVAL,
		  "in:1:35: \"minor\" must be an integer");
	PARSE_ERR("[{\"allow\":true,\"type\":\"c\",\"major\":\"1\"}]", -EINVAL,
		  "in:1:35: \"major\" must be an integer");
}

UTEST(oci_type_a_with_a_number_or_narrow_access_is_an_error)
{
	PARSE_ERR("[{\"allow\":true,\"type\":\"a\",\"major\":1}]", -EINVAL,
		  "in:1:35: type \"a\" means every device: \"major\" must be absent");
	PARSE_ERR("[{\"allow\":true,\"type\":\"a\",\"minor\":0}]", -EINVAL,
		  "in:1:35: type \"a\" means every device: \"minor\" must be absent");
	/* the same when type is missing (it means "a") */
	PARSE_ERR("[{\"allow\":false,\"major\":1}]", -EINVAL,
		  "in:1:25: type \"a\" means every device: \"major\" must be absent");
	PARSE_ERR("[{\"allow\":true,\"type\":\"a\",\"access\":\"r\"}]", -EINVAL,
		  "in:1:36: type \"a\" resets the whole list: its access can only be \"rwm\"");
}

UTEST(oci_element_that_is_not_an_object_is_an_error)
{
	PARSE_ERR("[{\"allow\": true}, 5]", -EINVAL, "in:1:19: a device rule must be an object");
	PARSE_ERR("{\"devices\": [[]]}", -EINVAL, "in:1:14: a device rule must be an object");
}

UTEST(oci_devices_that_are_not_an_array_is_an_error)
{
	PARSE_ERR("{\"devices\": 5}", -EINVAL, "in:1:13: the device rules must be an array");
	PARSE_ERR("{\"linux\": {\"resources\":\n  {\"devices\": {}}}}", -EINVAL,
		  "in:2:15: the device rules must be an array");
}

UTEST(oci_object_without_linux_or_devices_is_an_error)
{
	PARSE_ERR("\n  {\"ociVersion\": \"1.0.2\"}", -EINVAL,
		  "in:2:3: expected linux.resources.devices (config.json) or devices (LinuxResources)");
}

UTEST(oci_error_location_skips_strings_and_nested_values_before_it)
{
	/* earlier elements hold brackets, braces, escaped quotes and colons in strings */
	PARSE_ERR("[\n"
		  " {\"allow\": true, \"x\": [\"]\", {\"a\": \"}\"}]},\n"
		  " {\"allow\": true, \"note\": \"say \\\"hi\\\": [{\", \"n\": [[1], [2, {\"b\": []}]]},\n"
		  " {\"allow\": true, \"major\": \"1\"}]",
		  -EINVAL, "in:4:27: \"major\" must be an integer");
}

UTEST(oci_error_location_finds_the_field_among_others_in_config_json)
{
	PARSE_ERR("{\"linux\": {\"resources\": {\"devices\": [\n"
		  "  {\"allow\": false, \"access\": \"rwm\"},\n"
		  "  {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 3, \"access\": \"\"}]}}}",
		  -EINVAL, "in:3:66: \"access\" must be a non-empty subset of 'rwm'");
	/* "devices" as a key elsewhere (here in "linux") is not the one used */
	PARSE_ERR("{\"linux\": {\"devices\": [], \"resources\": {\"devices\": [\n"
		  "  {\"allow\": true, \"type\": \"q\"}]}}}",
		  -EINVAL, "in:2:27: \"type\" must be \"a\", \"b\" or \"c\", not \"q\"");
}

UTEST(oci_invalid_json_names_line_and_column)
{
	PARSE_ERR("[\n {\"allow\": tru}]", -EINVAL,
		  "in:2:14: invalid JSON: invalid token near 'tru'");
	PARSE_ERR("\n\n{\"devices\": [}", -EINVAL,
		  "in:3:14: invalid JSON: unexpected token near '}'");
}

UTEST(oci_trailing_text_after_the_json_is_invalid)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };
	const char *text = "[]\nc 1:3 r\n";

	CHECK_INT(devcg_rules_parse(r, text, strlen(text), "in", NULL, &err), -EINVAL);
	CHECK_MSG(!strncmp(err.msg, "in:2:", 5) && strstr(err.msg, "invalid JSON"), "%s", err.msg);
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(oci_duplicate_keys_are_invalid_json)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };
	const char *text = "[{\"allow\": true, \"allow\": false}]";

	CHECK_INT(devcg_rules_parse(r, text, strlen(text), "in", NULL, &err), -EINVAL);
	CHECK_MSG(!strncmp(err.msg, "in:1:", 5) && strstr(err.msg, "invalid JSON: duplicate"),
		  "%s", err.msg);
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(oci_nul_byte_after_a_literal_does_not_hang_the_error_location)
{
	/*
	 * jansson drops a NUL byte that directly follows a literal, so this
	 * text parses as JSON; locating the error in the second element must
	 * then step over the first one, NUL included, and return.
	 */
	static const char text[] = "[{\"allow\": true\0}, {\"allow\": 1}]";
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };

	alarm(2); /* a hang ends the test with SIGALRM */
	CHECK_INT(devcg_rules_parse(r, text, sizeof(text) - 1, "in", NULL, &err), -EINVAL);
	alarm(0);
	CHECK_MSG(!strncmp(err.msg, "in:1:", 5), "%s", err.msg);
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(oci_error_in_a_later_element_appends_nothing)
{
	PARSE_ERR("[{\"allow\": false},\n"
		  " {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 3},\n"
		  " {\"allow\": true, \"type\": \"c\", \"access\": \"rwq\"}]",
		  -EINVAL, "in:3:41: \"access\" must be letters of 'rwm', not \"rwq\"");
}

/* A bare array of N copies of one device rule. */
static char *many_json_rules(size_t n)
{
	static const char one[] = "{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":3},";
	char *s = malloc(n * (sizeof(one) - 1) + 3), *p = s;
	size_t i;

	CHECK(s);
	*p++ = '[';
	for (i = 0; i < n; i++, p += sizeof(one) - 1)
		memcpy(p, one, sizeof(one) - 1);
	p[-1] = ']'; /* replaces the last comma */
	*p = '\0';
	return s;
}

UTEST(oci_accepts_exactly_100000_rules)
{
	char *text = many_json_rules(DEVCG_MAX_RULES);
	struct devcg_rules *r = PARSE_OK(text);

	CHECK_INT(devcg_rules_count(r), DEVCG_MAX_RULES);
	CHECK_RULE(r, DEVCG_MAX_RULES - 1, ALLOW, DEVCG_CHAR, 1, 3, RWM);
	devcg_rules_free(r);
	free(text);
}

UTEST(oci_of_100001_rules_fails_with_e2big_and_appends_nothing)
{
	char *text = many_json_rules(DEVCG_MAX_RULES + 1);
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };

	CHECK_INT(devcg_rules_parse(r, text, strlen(text), "in", NULL, &err), -E2BIG);
	CHECK_STR(err.msg, "in:1:1: more than 100000 rules");
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
	free(text);
}

TEST(oci_linux_or_resources_that_are_not_objects_are_errors)
{
	const char *bad[] = { "{\"linux\": 5}", "{\"linux\": null}", "{\"linux\": {\"resources\": 5}}",
			      "{\"linux\": {\"resources\": []}}" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct devcg_rules *r = devcg_rules_new();
		struct devcg_error err = { 0 };

		CHECK_INT(devcg_rules_parse(r, bad[i], strlen(bad[i]), "in", NULL, &err), -EINVAL);
		CHECK_MSG(strstr(err.msg, "must be an object") != NULL, "%s: %s", bad[i], err.msg);
		CHECK_INT(devcg_rules_count(r), 0);
		devcg_rules_free(r);
	}
}
