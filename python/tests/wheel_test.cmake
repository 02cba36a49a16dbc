# ctest `python_wheel` (docs/python.md "A wheel"): python/make_wheel.py builds the wheel from the
# build tree twice (the same bytes both times), `python3 -m pip install --no-deps --target T`
# installs it, and from T: `pip show` sees it, `import schedsim` runs a scheduling decision, and
# every RECORD hash matches the installed file.
cmake_minimum_required(VERSION 3.16)
set(work ${WORK})
file(REMOVE_RECURSE ${work})
file(MAKE_DIRECTORY ${work})
foreach(n a b)
  execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/python/make_wheel.py ${BINARY_DIR}/python ${work}/${n}
                  OUTPUT_VARIABLE wheel_${n} ERROR_VARIABLE err RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc)
    message(FATAL_ERROR "make_wheel.py failed (${rc}): ${err}")
  endif()
endforeach()
get_filename_component(name ${wheel_a} NAME)
if(NOT name MATCHES "^schedsim-${VERSION}-cp[0-9]+-cp[0-9]+-linux_[a-z0-9_]+\\.whl$")
  message(FATAL_ERROR "unexpected wheel name: ${name}")
endif()
file(SHA256 ${wheel_a} ha)
file(SHA256 ${wheel_b} hb)
if(NOT ha STREQUAL hb)
  message(FATAL_ERROR "two wheels of one build differ")
endif()
execute_process(COMMAND ${PYTHON} -m pip install --no-deps --no-index --target ${work}/site ${wheel_a}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "pip install of ${name} failed (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${work}/site ${PYTHON} -m pip show schedsim
                WORKING_DIRECTORY ${work} OUTPUT_VARIABLE show RESULT_VARIABLE rc)
foreach(line "Name: schedsim" "Version: ${VERSION}" "Requires: pandas")
  string(FIND "${show}" "${line}\n" at)
  if(rc OR at EQUAL -1)
    message(FATAL_ERROR "pip show schedsim (from the wheel) lacks '${line}':\n${show}")
  endif()
endforeach()
set(check [=[
import base64, csv, hashlib, os, sys
import schedsim
site = sys.argv[1]
assert schedsim.__file__ == os.path.join(site, "schedsim", "__init__.py"), schedsim.__file__
c = schedsim.Cluster()
c.add_node("n", c.add_pool("p"), "A100", 8, 96000, 1024)
s = schedsim.Scheduler(c, schedsim.SchedulerOptions())
t = s.add_task(schedsim.TaskSpec("t", "u", options=[schedsim.GangOption("x", schedsim.ReplicaShape(num_gpu=8))],
                                 resource_type=schedsim.ResourceType.pay_as_you_go))
s.enqueue(t, 0)
assert s.schedule(0).started == [t]
info = [d for d in os.listdir(site) if d.endswith(".dist-info")][0]
rows = list(csv.reader(open(os.path.join(site, info, "RECORD"))))
for path, h, size in rows:
    if not h:
        continue
    data = open(os.path.join(site, path), "rb").read()
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert h == want and int(size) == len(data), path
print("ok", len(rows))
]=])
file(WRITE ${work}/check.py "${check}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${work}/site ${PYTHON} ${work}/check.py ${work}/site
                WORKING_DIRECTORY ${work} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc OR NOT out MATCHES "^ok [0-9]+")
  message(FATAL_ERROR "the installed wheel does not work (${rc}):\n${out}${err}")
endif()
