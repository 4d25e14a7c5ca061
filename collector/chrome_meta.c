/*
 * chrome_meta.c - the members of the Chrome trace around its events: the
 * file's head (schemaVersion to distributedInfo), the process's and its
 * threads' metadata events, and the file's tail (the "mxprof" object).
 * chrome.c writes the events between them.
 */
#include <stdio.h>

#include "internal.h"
#include "output.h"
#include "mxprof.h"

void chrome_head(struct out *o, const struct writer_meta *m,
		 const char *out_path)
{
	int first_dev = 1;

	out_str(o, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ns\","
		   "\"baseTimeNanoseconds\":");
	out_i64(o, m->base_utc_ns);
	out_str(o, ",\"deviceProperties\":[");
	for (size_t i = 0; m->sources && m->sources[i]; i++) {
		if (m->sources[i]->devices) {
			m->sources[i]->devices(o, &first_dev);
		}
	}
	out_str(o, "],");
	out_str(o, "\"traceName\":");
	out_json_str(o, out_path);
	out_str(o, ",");
	for (size_t i = 0; m->meta && m->meta[i]; i += 2) {
		out_json_str(o, m->meta[i]);
		out_str(o, ":");
		out_json_str(o, m->meta[i + 1]);
		out_str(o, ",");
	}
	for (size_t i = 0; m->meta_json && m->meta_json[i]; i += 2) {
		out_json_str(o, m->meta_json[i]);
		out_str(o, ":");
		out_str(o, m->meta_json[i + 1]);
		out_str(o, ",");
	}
	if (m->rank >= 0 || m->world_size > 0 || m->has_local_rank) {
		/* Kineto's keys, those the launcher's variables give. */
		const char *sep = "";
		out_str(o, "\"distributedInfo\":{");
		if (m->rank >= 0) {
			out_str(o, "\"rank\": ");
			out_i64(o, m->rank);
			sep = ", ";
		}
		if (m->world_size > 0) {
			out_str(o, sep);
			out_str(o, "\"world_size\": ");
			out_i64(o, m->world_size);
			sep = ", ";
		}
		if (m->has_local_rank) {
			out_str(o, sep);
			out_str(o, "\"local_rank\": ");
			out_i64(o, m->local_rank);
		}
		out_str(o, "},");
	}
}

void chrome_metadata(struct out *o, const struct writer_meta *m,
		     const char *pid, const struct chrome_thread *threads,
		     size_t n)
{
	out_str(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
	out_str(o, pid);
	out_str(o, ",\"tid\":0,\"args\":{\"name\":");
	/* The program's name alone, as Kineto names a process: the viewers
	 * add the pid themselves, and the rank and host are the file's
	 * (distributedInfo, mxprof.host); mxprof merge puts them in the
	 * labels of each process it merges. */
	out_json_str(o, m->process_name);
	if (m->cmdline && m->cmdline[0]) {
		/* The viewers show it under the process's name. */
		out_str(o, "}},\n{\"ph\":\"M\",\"name\":\"process_labels\","
			   "\"pid\":");
		out_str(o, pid);
		out_str(o, ",\"tid\":0,\"args\":{\"labels\":");
		out_json_str(o, m->cmdline);
	}
	out_str(o, "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\","
		   "\"pid\":");
	out_str(o, pid);
	out_str(o, ",\"tid\":0,\"args\":{\"sort_index\":");
	out_str(o, pid);
	out_str(o, "}}");
	for (size_t i = 0; i < n; i++) {
		const struct chrome_thread *th = &threads[i];
		char name[320];
		/* As Kineto labels every host thread: "thread 1234
		 * (python3)", the main thread included, so that threads
		 * that kept the program's name are told apart. */
		if (th->name) {
			snprintf(name, sizeof(name), "thread %d (%s)", th->tid,
				 th->name);
		} else {
			snprintf(name, sizeof(name), "thread %d", th->tid);
		}
		out_str(o,
			",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
		out_str(o, pid);
		out_str(o, ",\"tid\":");
		out_i64(o, th->tid);
		out_str(o, ",\"args\":{\"name\":");
		out_json_str(o, name);
		out_str(o, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\","
			   "\"pid\":");
		out_str(o, pid);
		out_str(o, ",\"tid\":");
		out_i64(o, th->tid);
		/* The main thread (tid == pid) sorts first. */
		out_str(o, ",\"args\":{\"sort_index\":");
		out_i64(o, th->tid == m->pid ? 0 : th->tid);
		out_str(o, "}}");
	}
}

void chrome_tail(struct out *o, const struct writer_meta *m, const char *pid)
{
	out_str(o, "\"mxprof\":{\"version\":\"" MXPROF_VERSION "\",\"pid\":");
	out_str(o, pid);
	out_str(o, ",\"host\":");
	out_json_str(o, m->host);
	out_str(o, ",\"droppedRecords\":");
	out_u64(o, m->dropped);
	out_str(o, ",\"timelineTruncated\":");
	out_str(o, m->truncated ? "true" : "false");
	out_str(o, ",\"clock\":\"");
	out_str(o, m->clock);
	out_str(o, "\"}}\n");
}
