/* numalot: a machine file as scenario.c takes it (machine_file.c). */
#ifndef NUMALOT_MACHINE_FILE_H
#define NUMALOT_MACHINE_FILE_H

struct json_object;

struct nl_machine_file {
	char *path; /* as given: messages name it */
	char *dir;  /* its folder, for a relative XML topology */
	struct json_object *machine; /* its "machine" object */
};

#endif
